/// Reading every live session back: one ordered scan of sessions (joined with their snapshots) and one of
/// events, matched by walking both in key order.
///
/// Concurrency: runs on the journal's writer queue like every other use of the store.
extension JournalStore {
    func recover(problems: inout [String]) throws(JournalError) -> [RecoveredSession] {
        var sessions: [RecoveredSession] = []
        var index: [String: Int] = [:]
        let readSessions = try connection.prepare(JournalSchema.readSessions)
        defer { readSessions.finalize() }
        while try readSessions.step() {
            guard let session = Self.session(from: readSessions, problems: &problems) else { continue }
            index[session.creation.id] = sessions.count
            sessions.append(session)
        }
        let readEvents = try connection.prepare(JournalSchema.readEvents)
        defer { readEvents.finalize() }
        var currentKey: [UInt8] = []
        var current: Int? = nil
        var orphans = 0
        while try readEvents.step() {
            let key = readEvents.bytes(0)
            if !key.elementsEqual(currentKey) {
                currentKey = Array(key)
                current = index[String(decoding: key, as: UTF8.self)]
            }
            guard let position = current else {
                orphans += 1
                continue
            }
            Self.append(from: readEvents, to: &sessions[position])
        }
        if orphans > 0 {
            problems.append("\(orphans) events of unknown sessions ignored (compaction deletes them)")
        }
        for session in sessions where session.damage != nil {
            problems.append("session \(session.creation.id): \(session.damage!)")
        }
        return sessions
    }

    /// Columns: id, system, epoch, state, created, crc, snapshot rev, snapshot state, snapshot crc.
    private static func session(from row: SQLiteStatement, problems: inout [String]) -> RecoveredSession? {
        let creation = SessionCreation(
            id: row.text(0),
            system: row.text(1),
            epoch: UInt64(bitPattern: row.int64(2)),
            state: row.text(3),
            createdAt: row.double(4)
        )
        guard RecordChecksum.creation(creation) == row.int64(5) else {
            problems.append("session \(creation.id): creation record fails its checksum; session not restored")
            return nil
        }
        var session = RecoveredSession(creation: creation, baseRevision: 0, baseState: creation.state, events: [])
        guard row.isNull(6) == false else { return session }
        let revision = UInt64(bitPattern: row.int64(6))
        let state = row.text(7)
        if RecordChecksum.of(creation.id, revision, state) == row.int64(8) {
            session.baseRevision = revision
            session.baseState = state
        } else {
            // The events it covered are gone: the initial state is the last consistent point.
            session.damage = "snapshot at revision \(revision) fails its checksum; restored at revision 0"
        }
        return session
    }

    /// Columns: session, rev, origin, event, crc. Keeps events that follow on without a gap and pass their
    /// checksum; the first one that does not ends the session's history.
    private static func append(from row: SQLiteStatement, to session: inout RecoveredSession) {
        guard session.damage == nil else { return }
        let revision = UInt64(bitPattern: row.int64(1))
        if revision <= session.baseRevision { return }  // covered by the snapshot, not yet compacted
        guard revision == session.revision + 1 else {
            session.damage = "event \(session.revision + 1) is missing; events from \(revision) on dropped"
            return
        }
        let origin = Int(row.int64(2))
        var sum = RecordChecksum()
        sum.add(row.bytes(0))
        sum.add(RecordChecksum.eventNumber(revision, origin))
        sum.add(row.bytes(3))
        guard sum.value == row.int64(4), let eventOrigin = EventOrigin(rawValue: origin) else {
            session.damage = "event \(revision) fails its checksum; it and later events dropped"
            return
        }
        session.events.append(JournalEvent(revision: revision, event: row.text(3), origin: eventOrigin))
    }
}
