/// Reading every live session back: one scan of sessions (joined with their snapshots), then one of the event
/// log in `seq` order, each event matched to its session through a dictionary.
///
/// Concurrency: runs on the journal's writer queue like every other use of the store.
extension JournalStore {
    /// Every live session, or only those among `only` when given: a few of them (an activation) one at a time, by
    /// their keys, with one scan of the log each; more of them (a re-anchoring pass) with one scan for all.
    func recover(problems: inout [String], only: Set<String>? = nil) throws(JournalError) -> [RecoveredSession] {
        guard let only else { return try recoverAll(problems: &problems, only: nil) }
        // Settled sessions (most of them: a passivation or a clean shutdown settles) are read by their keys alone;
        // the others need the log: a scan per session for a few, one scan of the whole log for more.
        var (sessions, unsettled) = try recover(problems: &problems, ids: only.sorted(), scanning: only.count <= 4)
        if unsettled.count <= 4 {
            sessions += try recover(problems: &problems, ids: unsettled, scanning: true).sessions
        } else {
            sessions += try recoverAll(problems: &problems, only: Set(unsettled))
        }
        return sessions
    }

    /// Every session (or those of `only`), with one scan of the log.
    private func recoverAll(problems: inout [String], only: Set<String>?) throws(JournalError) -> [RecoveredSession] {
        var sessions: [RecoveredSession] = []
        var generations: [Int64] = []
        var index: [String: Int] = [:]
        let readSessions = try connection.prepare(JournalSchema.readSessions)
        defer { readSessions.finalize() }
        while try readSessions.step() {
            if let only, !only.contains(readSessions.text(0)) { continue }
            guard let session = Self.session(from: readSessions, problems: &problems) else { continue }
            index[session.creation.id] = sessions.count
            sessions.append(session)
            generations.append(readSessions.int64(5))
        }
        let readEvents = try connection.prepare(JournalSchema.readEvents)
        defer { readEvents.finalize() }
        var currentKey: [UInt8] = []
        var current: Int? = nil
        while try readEvents.step() {
            let key = readEvents.bytes(0)
            if !key.elementsEqual(currentKey) {
                currentKey = Array(key)
                current = index[String(decoding: key, as: UTF8.self)]
            }
            // Events of removed sessions (or an earlier incarnation of the id) wait for compaction: skipped.
            guard let position = current, readEvents.int64(5) > generations[position] else { continue }
            Self.append(from: readEvents, to: &sessions[position])
        }
        try recoverAnswers(into: &sessions, index: index, problems: &problems)
        try recoverClients(into: &sessions, index: index, problems: &problems)
        try recoverTokens(into: &sessions)
        try recoverPaused(into: &sessions)
        for session in sessions where session.damage != nil {
            problems.append("session \(session.creation.id): \(session.damage!)")
        }
        return sessions
    }

    /// The sessions `ids`, one at a time: the creation and snapshot by key, the events after the session's
    /// generation (a scan of the log), the answers through `answers_by_session`. Without `scanning`, a session
    /// not settled at its snapshot is not read but returned in `unsettled` (its events need the log).
    private func recover(
        problems: inout [String],
        ids: [String],
        scanning: Bool
    ) throws(JournalError) -> (sessions: [RecoveredSession], unsettled: [String]) {
        let readSession = try connection.prepare(JournalSchema.readSession)
        defer { readSession.finalize() }
        let readEvents = try connection.prepare(JournalSchema.readSessionEvents)
        defer { readEvents.finalize() }
        let readSettled = try connection.prepare(JournalSchema.readSettled)
        defer { readSettled.finalize() }
        let readTokens = try connection.prepare(JournalSchema.readTokens)
        defer { readTokens.finalize() }
        var sessions: [RecoveredSession] = []
        var unsettled: [String] = []
        for id in ids {
            readSession.reset()
            readSession.bind(1, id)
            guard try readSession.step(), var session = Self.session(from: readSession, problems: &problems) else {
                continue
            }
            readSettled.reset()
            readSettled.bind(1, id)
            let settled = try readSettled.step() ? UInt64(bitPattern: readSettled.int64(0)) : nil
            // Settled at its snapshot: nothing follows it in the log, so the scan is skipped.
            if settled != session.baseRevision || session.damage != nil {
                guard scanning else {
                    unsettled.append(id)
                    continue
                }
                readEvents.reset()
                readEvents.bind(1, id)
                readEvents.bind(2, readSession.int64(5))
                while try readEvents.step() {
                    Self.append(from: readEvents, to: &session)
                }
            }
            try recoverAnswers(of: &session, problems: &problems)
            try recoverClients(of: &session, problems: &problems)
            try Self.recoverTokens(of: &session, with: readTokens)
            if let damage = session.damage { problems.append("session \(id): \(damage)") }
            sessions.append(session)
        }
        try recoverPaused(into: &sessions)
        return (sessions, unsettled)
    }

    /// Gives each of `sessions` its token generation (`tokens`, by key), after its events were followed.
    func recoverTokens(into sessions: inout [RecoveredSession]) throws(JournalError) {
        let read = try connection.prepare(JournalSchema.readTokens)
        defer { read.finalize() }
        for index in sessions.indices {
            try Self.recoverTokens(of: &sessions[index], with: read)
        }
    }

    /// Gives `session` its token generation through `read` (`JournalSchema.readTokens`); a row that fails its
    /// checksum marks the session damaged (`RecoveredSession.readTokens`).
    static func recoverTokens(of session: inout RecoveredSession, with read: SQLiteStatement) throws(JournalError) {
        read.reset()
        read.bind(1, session.creation.id)
        let stored: (UInt64, Int64?)? = try read.step() ? (UInt64(bitPattern: read.int64(0)), read.int64(1)) : nil
        session.readTokens(stored)
    }

    /// Columns: id, system, epoch, state, created, generation, crc, snapshot rev, snapshot state, snapshot crc,
    /// version, snapshot version.
    static func session(from row: SQLiteStatement, problems: inout [String]) -> RecoveredSession? {
        let creation = SessionCreation(
            id: row.text(0),
            system: row.text(1),
            epoch: UInt64(bitPattern: row.int64(2)),
            state: row.text(3),
            createdAt: row.double(4),
            version: Int(row.int64(10))
        )
        let snapshot =
            row.isNull(7)
            ? nil
            : RecoveredSession.StoredSnapshot(
                revision: UInt64(bitPattern: row.int64(7)),
                state: row.text(8),
                version: Int(row.int64(11)),
                checksum: row.int64(9)
            )
        return .checked(
            creation,
            generation: row.int64(5),
            creationChecksum: row.int64(6),
            snapshot: snapshot,
            problems: &problems
        )
    }

    /// Columns: session, rev, origin, event, crc, seq, version, at, state_sum. Keeps events that follow on without a
    /// gap and pass their checksum; the first one that does not ends the session's history.
    static func append(from row: SQLiteStatement, to session: inout RecoveredSession) {
        let revision = UInt64(bitPattern: row.int64(1))
        session.follow(revision) { event(from: row, revision: revision) }
    }

    /// The event of a row of `append`'s columns, nil when it fails its checksum.
    static func event(from row: SQLiteStatement, revision: UInt64) -> JournalEvent? {
        let origin = Int(row.int64(2))
        let stamp = EventStamp(
            version: Int(row.int64(6)),
            time: row.isNull(7) ? nil : row.int64(7),
            stateChecksum: row.isNull(8) ? nil : UInt64(bitPattern: row.int64(8)),
            feedback: row.isNull(9) ? nil : row.text(9)
        )
        var sum = RecordChecksum()
        sum.addEvent(
            id: row.bytes(0),
            number: RecordChecksum.eventNumber(revision, origin),
            event: row.bytes(3),
            stamp: stamp
        )
        guard sum.value == row.int64(4), let eventOrigin = EventOrigin(rawValue: origin) else { return nil }
        return JournalEvent(revision: revision, event: row.text(3), origin: eventOrigin, stamp: stamp)
    }
}
