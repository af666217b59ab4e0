/// Quarantine (schema version 8's `quarantine` table): the sessions the process died inside of, kept until released.
///
/// Concurrency: runs on the journal's writer queue like every other use of the store, between group commits.
extension JournalStore {
    /// Records (or replaces) session `id`'s quarantine in a transaction of its own.
    func quarantine(_ id: String, reason: String, at time: Int64) throws(JournalError) {
        let statement = try connection.prepare(JournalSchema.upsertQuarantine)
        defer { statement.finalize() }
        statement.bind(1, id)
        statement.bind(2, reason)
        statement.bind(3, time)
        statement.bind(4, Quarantine.hostName)
        try transaction { () throws(JournalError) in try statement.run() }
    }

    /// Deletes session `id`'s quarantine in a transaction of its own; returns whether there was one.
    func releaseQuarantine(_ id: String) throws(JournalError) -> Bool {
        let statement = try connection.prepare(JournalSchema.deleteQuarantine)
        defer { statement.finalize() }
        statement.bind(1, id)
        return try transaction { () throws(JournalError) in
            try statement.run()
            return try connection.integer("SELECT changes()") > 0
        }
    }

    /// Session `id`'s quarantine, nil when there is none.
    func quarantine(of id: String) throws(JournalError) -> Quarantine? {
        let statement = try connection.prepare(JournalSchema.readQuarantine)
        defer { statement.finalize() }
        statement.bind(1, id)
        return try statement.step() ? Self.quarantine(from: statement) : nil
    }

    /// The quarantines, oldest first, at most `limit`.
    func quarantined(limit: Int) throws(JournalError) -> [Quarantine] {
        let statement = try connection.prepare(JournalSchema.listQuarantine)
        defer { statement.finalize() }
        statement.bind(1, Int64(max(limit, 0)))
        var found: [Quarantine] = []
        while try statement.step() { found.append(Self.quarantine(from: statement)) }
        return found
    }

    /// Columns: session, reason, at, replica.
    private static func quarantine(from row: SQLiteStatement) -> Quarantine {
        Quarantine(
            sessionID: row.text(0),
            reason: row.text(1),
            at: row.int64(2),
            replica: row.isNull(3) ? nil : row.text(3)
        )
    }

    /// Runs `body` in a transaction of its own (rolled back when it throws), counted for the interval policy's sync.
    private func transaction<T>(_ body: () throws(JournalError) -> T) throws(JournalError) -> T {
        try connection.execute("BEGIN IMMEDIATE")
        let result: T
        do throws(JournalError) {
            result = try body()
            try connection.execute("COMMIT")
        } catch {
            try? connection.execute("ROLLBACK")
            throw error
        }
        unsyncedCommits += 1
        return result
    }
}

extension Journal {
    /// Quarantines session `id` with `reason` at `time` (milliseconds since 1970), replacing an earlier quarantine of
    /// it. Runs on the writer queue between commits, after every append queued before it; committed on return (synced
    /// under `per-commit`, by the next sync under `interval`: in the page cache, which a process's death keeps).
    public func quarantine(_ id: String, reason: String, at time: Int64) throws(JournalError) {
        try withStore { store throws(JournalError) in try store.quarantine(id, reason: reason, at: time) }
    }

    /// Ends session `id`'s quarantine; returns whether it was quarantined.
    public func releaseQuarantine(_ id: String) throws(JournalError) -> Bool {
        try withStore { store throws(JournalError) in try store.releaseQuarantine(id) }
    }

    /// Session `id`'s quarantine, nil when it is not quarantined.
    public func quarantine(of id: String) throws(JournalError) -> Quarantine? {
        try withStore { store throws(JournalError) in try store.quarantine(of: id) }
    }

    /// The quarantined sessions, oldest quarantine first, at most `limit`.
    public func quarantined(limit: Int) throws(JournalError) -> [Quarantine] {
        try withStore { store throws(JournalError) in try store.quarantined(limit: limit) }
    }
}
