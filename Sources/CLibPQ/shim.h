#ifndef FEEDBACKHOST_CLIBPQ_SHIM_H
#define FEEDBACKHOST_CLIBPQ_SHIM_H
#include <libpq-fe.h>

/// Silences libpq's default notice processor (it prints NOTICEs such as "relation already exists, skipping" to
/// stderr); the journal reads errors from results, not notices.
static inline void fh_pq_ignore_notice(void *arg, const char *message) {
    (void)arg;
    (void)message;
}

static inline void fh_pq_silence_notices(PGconn *conn) {
    PQsetNoticeProcessor(conn, fh_pq_ignore_notice, 0);
}

#endif
