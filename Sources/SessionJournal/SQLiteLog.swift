internal import CSQLite
import Logging
import Synchronization

/// What SQLite reports in its error log (`SQLITE_CONFIG_LOG`, set before the process's first connection). A misuse of
/// its interface is a defect of the journal's own code (a statement bound while it runs, say: SQLite refuses the call
/// and goes on with what was bound before), so it is logged as an error and counted, and the tests require none.
/// Anything else (each error a call returned, with the system's `errno` for an I/O error; a WAL recovered at open)
/// is logged at debug: the journal reports its own failures where it meets them.
///
/// Concurrency: SQLite calls the handler on whichever thread met the condition; it touches only the `Logger` and the
/// atomic counter, and calls no SQLite function (which the log's contract forbids).
enum SQLiteLog {
    static let logger = Logger(label: "feedbackhost.journal.sqlite")

    /// Misuses SQLite has reported in this process.
    static let misuses = Atomic<Int>(0)

    /// `misuses`, read.
    static var misuseCount: Int { misuses.load(ordering: .relaxed) }

    static let handler: fh_sqlite3_log_handler = { _, code, message in
        if code & 0xFF == SQLITE_MISUSE {
            misuses.add(1, ordering: .relaxed)
            logger.error(
                "journal: SQLite reports a misuse of its interface (a defect of the journal's code)",
                metadata: ["sqlite": "\(message.map { String(cString: $0) } ?? "")"]
            )
        } else {
            logger.debug(
                "journal: SQLite reports code \(code)",
                metadata: ["sqlite": "\(message.map { String(cString: $0) } ?? "")"]
            )
        }
    }
}
