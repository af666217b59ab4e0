// What compaction's test of a row of the log costs (session 24): times, on a copy of a journal, one
// `DELETE FROM events` over the whole log inside a transaction that is rolled back, five times each (the best is
// printed, in µs a row of the log scanned), with the test written four ways: the subqueries of sessions 22–23 (the
// session's row first), the same with the cover test first, a C function of the connection that reads each session's
// cutoff once a statement and keeps it in a table (what `CompactionCutoffs` does in Swift), and no test at all (the
// delete alone, the floor). Each way deletes the same rows but the last.
//
// Build and run (Debian's libsqlite3, the server's): a copy of the journal of a server stopped under load, e.g. the
// `data/journal.sqlite` of `make run` after `wrk` has posted to 64 counter sessions for a few seconds (stop the server
// first; the copy must not be the live file):
//   gcc -O2 -o /tmp/compaction-rows scripts/compaction-rows.c -lsqlite3 && /tmp/compaction-rows /tmp/journal-copy.sqlite
#include <sqlite3.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

typedef struct {
    char key[64];
    int length;
    int64_t cutoff, generation;
    int used;
} entry_t;

static entry_t table[8192];
static sqlite3_stmt *lookup;

static uint64_t hash(const unsigned char *bytes, int length) {
    uint64_t h = 1469598103934665603ULL;
    for (int i = 0; i < length; i++) h = (h ^ bytes[i]) * 1099511628211ULL;
    return h;
}

// fh_compactable(session, rev, seq): the row's session's cutoff read once, then kept.
static void compactable(sqlite3_context *context, int count, sqlite3_value **arguments) {
    (void)count;
    const unsigned char *session = sqlite3_value_text(arguments[0]);
    int length = sqlite3_value_bytes(arguments[0]);
    int64_t rev = sqlite3_value_int64(arguments[1]), seq = sqlite3_value_int64(arguments[2]);
    if (length > 63) length = 63;
    uint64_t slot = hash(session, length) & 8191;
    entry_t *entry;
    for (;;) {
        entry = &table[slot];
        if (!entry->used) break;
        if (entry->length == length && memcmp(entry->key, session, length) == 0) goto found;
        slot = (slot + 1) & 8191;
    }
    sqlite3_bind_text(lookup, 1, (const char *)session, length, SQLITE_STATIC);
    sqlite3_step(lookup);
    entry->cutoff = sqlite3_column_int64(lookup, 0);
    entry->generation = sqlite3_column_type(lookup, 1) == SQLITE_NULL ? INT64_MAX : sqlite3_column_int64(lookup, 1);
    sqlite3_reset(lookup);
    memcpy(entry->key, session, length);
    entry->length = length;
    entry->used = 1;
found:
    sqlite3_result_int(context, rev <= entry->cutoff || !(entry->generation < seq));
}

static double best_run(sqlite3 *db, const char *sql, int64_t low, int64_t high, int *deleted) {
    sqlite3_stmt *statement;
    if (sqlite3_prepare_v2(db, sql, -1, &statement, 0) != SQLITE_OK) {
        fprintf(stderr, "%s\n", sqlite3_errmsg(db));
        return -1;
    }
    double best = 1e18;
    for (int round = 0; round < 5; round++) {
        memset(table, 0, sizeof table);
        sqlite3_exec(db, "BEGIN IMMEDIATE", 0, 0, 0);
        struct timespec start, end;
        clock_gettime(CLOCK_MONOTONIC, &start);
        sqlite3_bind_int64(statement, 1, low);
        sqlite3_bind_int64(statement, 2, high);
        sqlite3_step(statement);
        sqlite3_reset(statement);
        clock_gettime(CLOCK_MONOTONIC, &end);
        *deleted = sqlite3_changes(db);
        sqlite3_exec(db, "ROLLBACK", 0, 0, 0);
        double micros = (end.tv_sec - start.tv_sec) * 1e6 + (end.tv_nsec - start.tv_nsec) / 1e3;
        if (micros < best) best = micros;
    }
    sqlite3_finalize(statement);
    return best;
}

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: %s JOURNAL-COPY.sqlite\n", argv[0]);
        return 2;
    }
    sqlite3 *db;
    if (sqlite3_open(argv[1], &db) != SQLITE_OK) return 1;
    sqlite3_exec(db, "PRAGMA locking_mode=EXCLUSIVE; PRAGMA journal_mode=WAL;", 0, 0, 0);
    sqlite3_prepare_v2(db,
        "SELECT coalesce((SELECT min(rev) FROM history WHERE session = ?1), "
        "(SELECT rev FROM snapshots WHERE session = ?1), -1), (SELECT generation FROM sessions WHERE id = ?1)",
        -1, &lookup, 0);
    sqlite3_create_function_v2(db, "fh_compactable", 3, SQLITE_UTF8, 0, compactable, 0, 0, 0);
    sqlite3_stmt *range;
    sqlite3_prepare_v2(db, "SELECT min(seq), max(seq) + 1, count(DISTINCT session) FROM events", -1, &range, 0);
    sqlite3_step(range);
    int64_t low = sqlite3_column_int64(range, 0), high = sqlite3_column_int64(range, 1);
    int sessions = sqlite3_column_int(range, 2);
    sqlite3_finalize(range);
    printf("%lld rows of the log from %d sessions\n", (long long)(high - low), sessions);
    const char *ways[][2] = {
        {"subqueries, session first",
            "DELETE FROM events WHERE seq >= ?1 AND seq < ?2 AND ("
            "NOT EXISTS (SELECT 1 FROM sessions s WHERE s.id = events.session AND s.generation < events.seq) "
            "OR rev <= coalesce((SELECT min(h.rev) FROM history h WHERE h.session = events.session), "
            "(SELECT n.rev FROM snapshots n WHERE n.session = events.session), -1))"},
        {"subqueries, cover first",
            "DELETE FROM events WHERE seq >= ?1 AND seq < ?2 AND ("
            "rev <= coalesce((SELECT min(h.rev) FROM history h WHERE h.session = events.session), "
            "(SELECT n.rev FROM snapshots n WHERE n.session = events.session), -1) "
            "OR NOT EXISTS (SELECT 1 FROM sessions s WHERE s.id = events.session AND s.generation < events.seq))"},
        {"function, cutoffs kept", "DELETE FROM events WHERE seq >= ?1 AND seq < ?2 AND fh_compactable(session, rev, seq)"},
        {"no test (the delete alone)", "DELETE FROM events WHERE seq >= ?1 AND seq < ?2"},
    };
    for (int way = 0; way < 4; way++) {
        int deleted = 0;
        double micros = best_run(db, ways[way][1], low, high, &deleted);
        printf("%-28s %6d rows deleted  %.3f us a row scanned\n", ways[way][0], deleted, micros / (double)(high - low));
    }
    sqlite3_finalize(lookup);
    sqlite3_close(db);
    return 0;
}
