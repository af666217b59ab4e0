/// The deadline index: each session's next durable-timer deadline, for waking passive sessions.
extension JournalStore {
    /// The sessions whose deadline is at or before `time`, earliest first, at most `limit`.
    func deadlines(through time: Int64, limit: Int) throws(JournalError) -> [JournalDeadline] {
        try deadlines(JournalSchema.dueDeadlines, time, limit)
    }

    /// The deadlines after `time`, earliest first, at most `limit`.
    func deadlines(after time: Int64, limit: Int) throws(JournalError) -> [JournalDeadline] {
        try deadlines(JournalSchema.upcomingDeadlines, time, limit)
    }

    private func deadlines(_ sql: String, _ time: Int64, _ limit: Int) throws(JournalError) -> [JournalDeadline] {
        let statement = try connection.prepare(sql)
        defer { statement.finalize() }
        statement.bind(1, time)
        statement.bind(2, Int64(limit))
        var found: [JournalDeadline] = []
        while try statement.step() {
            found.append(JournalDeadline(sessionID: statement.text(0), at: statement.int64(1)))
        }
        return found
    }

    /// How many sessions have a deadline.
    func deadlineCount() throws(JournalError) -> Int {
        Int(try connection.integer(JournalSchema.countDeadlines))
    }

    /// Gives every session without an activity row one at `time`; returns how many got one.
    func stampActivity(at time: Int64) throws(JournalError) -> Int {
        let statement = try connection.prepare(JournalSchema.stampActivity)
        defer { statement.finalize() }
        statement.bind(1, time)
        try statement.run()
        return Int(try connection.integer("SELECT changes()"))
    }

    /// Sets the last-activity time of `ids` to `time`, in one transaction.
    func touchActivity(of ids: [String], at time: Int64) throws(JournalError) {
        let statement = try connection.prepare(JournalSchema.touchActivity)
        defer { statement.finalize() }
        try connection.execute("BEGIN IMMEDIATE")
        do throws(JournalError) {
            for id in ids {
                statement.bind(1, id)
                statement.bind(2, time)
                try statement.run()
            }
            try connection.execute("COMMIT")
        } catch {
            try? connection.execute("ROLLBACK")
            throw error
        }
    }

    /// Raises the token generations of `generations`' sessions (those the journal holds, to a higher generation than
    /// they have), in one transaction; returns the ids raised.
    func raiseTokenGenerations(_ generations: [String: UInt64]) throws(JournalError) -> [String] {
        let statement = try connection.prepare(JournalSchema.raiseTokens)
        defer { statement.finalize() }
        try connection.execute("BEGIN IMMEDIATE")
        var raised: [String] = []
        do throws(JournalError) {
            for (id, generation) in generations.sorted(by: { $0.key < $1.key }) where generation > 0 {
                statement.bind(1, id)
                statement.bind(2, Int64(bitPattern: generation))
                statement.bind(3, RecordChecksum.tokens(id, generation))
                try statement.run()
                if try connection.integer("SELECT changes()") > 0 { raised.append(id) }
            }
            try connection.execute("COMMIT")
        } catch {
            try? connection.execute("ROLLBACK")
            throw error
        }
        return raised
    }

    /// Removes those of `ids` that left memory before `time` and have no deadline pending, in one transaction;
    /// returns them.
    func retire(_ ids: [String], leftBefore time: Int64) throws(JournalError) -> [String] {
        let check = try connection.prepare(JournalSchema.isAbandoned)
        defer { check.finalize() }
        try connection.execute("BEGIN IMMEDIATE")
        var retired: [String] = []
        do throws(JournalError) {
            for id in ids {
                check.reset()
                check.bind(1, id)
                check.bind(2, time)
                guard try check.step() else { continue }
                check.reset()
                try write(.removed(sessionID: id))
                retired.append(id)
            }
            try connection.execute("COMMIT")
        } catch {
            try? connection.execute("ROLLBACK")
            throw error
        }
        return retired
    }

    /// Sessions that last left memory before `time` with no deadline pending, oldest first, at most `limit`.
    func abandonedSessions(before time: Int64, limit: Int) throws(JournalError) -> [String] {
        let statement = try connection.prepare(JournalSchema.abandonedSessions)
        defer { statement.finalize() }
        statement.bind(1, time)
        statement.bind(2, Int64(limit))
        var ids: [String] = []
        while try statement.step() { ids.append(statement.text(0)) }
        return ids
    }

    /// Deletes the deadlines of sessions that are gone; returns how many.
    func compactDeadlines() throws(JournalError) -> Int {
        try connection.execute(JournalSchema.compactDeadlines)
        return Int(try connection.integer("SELECT changes()"))
    }
}

/// A session's next durable-timer deadline, as the journal's index holds it.
public struct JournalDeadline: Sendable, Equatable {
    /// The session's id.
    public var sessionID: String
    /// Milliseconds since 1970.
    public var at: Int64

    /// Creates an entry.
    public init(sessionID: String, at: Int64) {
        self.sessionID = sessionID
        self.at = at
    }
}

extension Journal {
    /// The sessions whose deadline is at or before `time` (milliseconds since 1970), earliest first, at most
    /// `limit`. Runs on the writer queue between commits, after every append queued before it.
    public func deadlines(through time: Int64, limit: Int) throws(JournalError) -> [JournalDeadline] {
        try withStore { store throws(JournalError) in try store.deadlines(through: time, limit: limit) }
    }

    /// The deadlines after `time` (milliseconds since 1970), earliest first, at most `limit`.
    public func deadlines(after time: Int64, limit: Int) throws(JournalError) -> [JournalDeadline] {
        try withStore { store throws(JournalError) in try store.deadlines(after: time, limit: limit) }
    }

    /// Gives every session the journal holds without a last-activity time one at `time` (milliseconds since
    /// 1970): sessions a crash left unsettled, or journaled before the journal kept the time. Returns how many.
    public func stampActivity(at time: Int64) throws(JournalError) -> Int {
        try withStore { store throws(JournalError) in try store.stampActivity(at: time) }
    }

    /// Sessions that last left memory before `time` (milliseconds since 1970) and have no pending durable-timer
    /// deadline, oldest first, at most `limit`: the candidates of `session.retention`. Some may be active again;
    /// the caller knows which.
    public func abandonedSessions(before time: Int64, limit: Int) throws(JournalError) -> [String] {
        try withStore { store throws(JournalError) in try store.abandonedSessions(before: time, limit: limit) }
    }

    /// Sets the last-activity time of `ids` (sessions that are active again) to `time`.
    public func touchActivity(of ids: [String], at time: Int64) throws(JournalError) {
        try withStore { store throws(JournalError) in try store.touchActivity(of: ids, at: time) }
    }

    /// Deletes, as a removal would, those of `ids` that left memory before `time` and have no deadline pending;
    /// returns them. The caller holds none of them in memory.
    public func retire(_ ids: [String], leftBefore time: Int64) throws(JournalError) -> [String] {
        try withStore { store throws(JournalError) in try store.retire(ids, leftBefore: time) }
    }

    /// Raises the token generations of the sessions of `generations` the journal holds (this machine owns them all).
    public func adoptTokenGenerations(_ generations: [String: UInt64]) throws(JournalError) -> [String] {
        try withStore { store throws(JournalError) in try store.raiseTokenGenerations(generations) }
    }

    /// How many sessions have a pending deadline.
    public func deadlineCount() throws(JournalError) -> Int {
        try withStore { store throws(JournalError) in try store.deadlineCount() }
    }
}
