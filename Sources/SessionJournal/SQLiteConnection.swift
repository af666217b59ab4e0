internal import CSQLite

/// One SQLite connection.
///
/// Concurrency: not thread-safe; whoever owns it (the journal's writer queue, or the thread running a salvage)
/// uses it from one thread at a time. `close()` must be called explicitly, after every statement is finalized.
final class SQLiteConnection {
    private(set) var handle: OpaquePointer?
    let path: String

    /// Opens `path` (read-write and created when missing, or read-only) through the SQLite VFS named `vfs` (the
    /// default one when nil).
    init(path: String, readOnly: Bool = false, vfs: String? = nil) throws(JournalError) {
        self.path = path
        _ = Self.configured
        var db: OpaquePointer?
        let flags =
            (readOnly ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE) | SQLITE_OPEN_NOMUTEX
        let rc = sqlite3_open_v2(path, &db, flags, vfs)
        guard rc == SQLITE_OK, let db else {
            let message = db.map { String(cString: sqlite3_errmsg($0)) } ?? String(cString: sqlite3_errstr(rc))
            sqlite3_close_v2(db)
            throw JournalError(.sqlite, "cannot open \(path): \(message)")
        }
        handle = db
        // Wait for another connection's lock instead of failing at once (only salvage opens a second one).
        sqlite3_busy_timeout(db, 5000)
    }

    /// SQLite set up for the process once, before its first connection: its memory statistics, which nothing reads,
    /// off (with them on, each of its allocations takes a process-wide mutex: about 22 lock pairs a durable post), and
    /// its error log to `SQLiteLog`.
    private static let configured: Bool = {
        let statistics = fh_sqlite3_disable_memory_statistics()
        let log = fh_sqlite3_set_log(SQLiteLog.handler)
        return statistics == SQLITE_OK && log == SQLITE_OK
    }()

    /// Rows the last INSERT, UPDATE or DELETE changed (`changes()` without a statement).
    var changes: Int { Int(sqlite3_changes(handle)) }

    /// Runs SQL without results (several statements allowed).
    func execute(_ sql: String) throws(JournalError) {
        var errorMessage: UnsafeMutablePointer<CChar>?
        let rc = sqlite3_exec(handle, sql, nil, nil, &errorMessage)
        if rc != SQLITE_OK {
            let message = errorMessage.map { String(cString: $0) } ?? String(cString: sqlite3_errstr(rc))
            sqlite3_free(errorMessage)
            throw JournalError(rc & 0xFF == SQLITE_FULL ? .full : .sqlite, "\(sql.prefix(60)): \(message)")
        }
    }

    /// Runs a query and returns the first column of every row as text.
    func texts(_ sql: String) throws(JournalError) -> [String] {
        let statement = try prepare(sql)
        defer { statement.finalize() }
        var rows: [String] = []
        while try statement.step() {
            rows.append(statement.text(0))
        }
        return rows
    }

    /// Runs a query and returns the first column of its first row as an integer (0 when there is no row).
    func integer(_ sql: String) throws(JournalError) -> Int64 {
        let statement = try prepare(sql)
        defer { statement.finalize() }
        return try statement.step() ? statement.int64(0) : 0
    }

    /// Compiles one statement meant to be reset and reused.
    func prepare(_ sql: String) throws(JournalError) -> SQLiteStatement {
        var statement: OpaquePointer?
        let rc = sqlite3_prepare_v3(handle, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &statement, nil)
        guard rc == SQLITE_OK, let statement else {
            throw JournalError(.sqlite, "prepare \(sql.prefix(60)): \(errorMessage)")
        }
        return SQLiteStatement(statement, connection: self)
    }

    var errorMessage: String { handle.map { String(cString: sqlite3_errmsg($0)) } ?? "closed" }

    /// Closes the connection; the last close of a WAL database checkpoints it and deletes the WAL file.
    func close() {
        guard let handle else { return }
        sqlite3_close_v2(handle)
        self.handle = nil
    }
}
