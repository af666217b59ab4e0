internal import CSQLite

/// A prepared statement, bound, stepped and reset many times.
///
/// Concurrency: used only by its connection's owner. Text is bound by copy, so no buffer must outlive a call.
final class SQLiteStatement {
    private var handle: OpaquePointer?
    private unowned let connection: SQLiteConnection

    init(_ handle: OpaquePointer, connection: SQLiteConnection) {
        self.handle = handle
        self.connection = connection
    }

    func bind(_ index: Int32, _ value: Int64) {
        sqlite3_bind_int64(handle, index, value)
    }

    /// Binds NULL for nil.
    func bind(_ index: Int32, _ value: Int64?) {
        if let value { sqlite3_bind_int64(handle, index, value) } else { sqlite3_bind_null(handle, index) }
    }

    /// The number of columns of a row.
    var columnCount: Int32 { sqlite3_column_count(handle) }

    func bind(_ index: Int32, _ value: Double) {
        sqlite3_bind_double(handle, index, value)
    }

    func bind(_ index: Int32, _ value: String) {
        var value = value
        value.withUTF8 { bytes in
            bytes.withMemoryRebound(to: CChar.self) { chars in
                _ = fh_sqlite3_bind_text_copy(handle, index, chars.baseAddress, Int32(chars.count))
            }
        }
    }

    /// Runs a statement that returns no rows with text parameters bound in place to ranges of `bytes` (no copy):
    /// `bind(parameter, range)` in `texts` binds them; SQLite reads them only while it steps, inside this call. Every
    /// binding is cleared once the statement is reset, before this returns.
    func run(
        bindingIn bytes: [UInt8],
        _ texts: (_ bind: (Int32, Range<Int>) -> Void) -> Void
    ) throws(JournalError) {
        let rc = bytes.withUnsafeBytes { buffer in
            texts { index, range in bind(index, text: UnsafeRawBufferPointer(rebasing: buffer[range])) }
            return sqlite3_step(handle)
        }
        defer {
            reset()
            clearBindings()
        }
        _ = try stepped(rc)
    }

    /// Binds NULL for nil.
    func bind(_ index: Int32, _ value: String?) {
        if let value { bind(index, value) } else { sqlite3_bind_null(handle, index) }
    }

    /// Steps once: true when a row is available, false when the statement is done.
    func step() throws(JournalError) -> Bool {
        try stepped(sqlite3_step(handle))
    }

    /// What a step's result code says: a row, done, or the error (the statement reset).
    private func stepped(_ rc: Int32) throws(JournalError) -> Bool {
        switch rc {
        case SQLITE_ROW: return true
        case SQLITE_DONE: return false
        default:
            let message = connection.errorMessage
            sqlite3_reset(handle)
            throw JournalError(rc & 0xFF == SQLITE_FULL ? .full : .sqlite, "step: \(message) (\(rc))")
        }
    }

    /// Runs a statement that returns no rows, then resets it for the next use.
    func run() throws(JournalError) {
        defer { reset() }
        _ = try step()
    }

    var rawHandle: OpaquePointer? { handle }

    /// The statement's SQL with its bound values in place of the parameters, as SQLite renders it (nil when out of
    /// memory).
    var expandedSQL: String? {
        guard let text = sqlite3_expanded_sql(handle) else { return nil }
        defer { sqlite3_free(text) }
        return String(cString: text)
    }

    func bindValue(_ index: Int32, _ value: OpaquePointer?) {
        sqlite3_bind_value(handle, index, value)
    }

    func reset() {
        sqlite3_reset(handle)
    }

    /// Binds `bytes` as text in place (no copy): they must stay valid until the statement is reset and its bindings
    /// cleared (`clearBindings`).
    func bind(_ index: Int32, text bytes: UnsafeRawBufferPointer) {
        // A nil destructor is SQLITE_STATIC: the bytes are not copied.
        sqlite3_bind_text(
            handle,
            index,
            bytes.baseAddress?.assumingMemoryBound(to: CChar.self),
            Int32(bytes.count),
            nil
        )
    }

    /// Unbinds every parameter (NULL).
    func clearBindings() {
        sqlite3_clear_bindings(handle)
    }

    func int64(_ column: Int32) -> Int64 { sqlite3_column_int64(handle, column) }

    func isNull(_ column: Int32) -> Bool { sqlite3_column_type(handle, column) == SQLITE_NULL }

    func double(_ column: Int32) -> Double { sqlite3_column_double(handle, column) }

    /// The column's bytes, valid until the next step, reset or column call on this statement.
    func bytes(_ column: Int32) -> UnsafeRawBufferPointer {
        guard let text = sqlite3_column_text(handle, column) else {
            return UnsafeRawBufferPointer(start: nil, count: 0)
        }
        return UnsafeRawBufferPointer(start: text, count: Int(sqlite3_column_bytes(handle, column)))
    }

    func text(_ column: Int32) -> String {
        String(decoding: bytes(column), as: UTF8.self)
    }

    func finalize() {
        sqlite3_finalize(handle)
        handle = nil
    }
}

extension SQLiteStatement {
    /// Binds this row's first `count` columns, values as they are, to `target`'s parameters 1...count.
    func copyColumns(_ count: Int32, to target: SQLiteStatement) {
        for column in 0..<count {
            target.bindValue(column + 1, sqlite3_column_value(rawHandle, column))
        }
    }
}
