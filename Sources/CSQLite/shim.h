#ifndef FEEDBACKHOST_CSQLITE_SHIM_H
#define FEEDBACKHOST_CSQLITE_SHIM_H
#include <sqlite3.h>

/// SQLITE_TRANSIENT is a macro casting -1 to a function pointer, which Swift cannot import:
/// binds text that SQLite copies before returning.
static inline int fh_sqlite3_bind_text_copy(sqlite3_stmt *stmt, int index, const char *text, int length) {
    return sqlite3_bind_text(stmt, index, text, length, SQLITE_TRANSIENT);
}

/// sqlite3_config is variadic, which Swift cannot call. Turns off SQLite's memory statistics (which nothing here
/// reads): with them on, every allocation SQLite makes takes a process-wide mutex. Must run before SQLite
/// initializes (the first open); later it returns SQLITE_MISUSE and changes nothing.
static inline int fh_sqlite3_disable_memory_statistics(void) {
    return sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
}

/// SQLite's error log (SQLITE_CONFIG_LOG): `handler` gets each error and notice SQLite reports, with its code. Like
/// the memory statistics, set before SQLite initializes (the first open).
typedef void (*fh_sqlite3_log_handler)(void *context, int code, const char *message);
static inline int fh_sqlite3_set_log(fh_sqlite3_log_handler handler) {
    return sqlite3_config(SQLITE_CONFIG_LOG, handler, (void *)0);
}

#endif
