import Logging
public import SessionJournal
import Synchronization

/// Reading sessions back from PostgreSQL, each in the transaction that takes it (see `PostgresSchema`'s "take").
///
/// Concurrency: called from any thread but the journal's queue; the statements run there in turn with the appends.
extension PostgresJournal {
    public func recover(only ids: Set<String>) throws(JournalError) -> [RecoveredSession] {
        guard !ids.isEmpty else { return [] }
        let ordered = ids.sorted()
        let tokens = ordered.map { _ in Int64.random(in: 1...Int64.max) }
        var statements: [PostgresConnection.Statement] = []
        for (id, token) in zip(ordered, tokens) {
            statements.append(.init(name: "take", parameters: [id, String(token), String(replica)]))
            statements.append(.init(name: "read.snapshot", parameters: [id]))
            statements.append(.init(name: "read.events", parameters: [id]))
            statements.append(.init(name: "read.answers", parameters: [id]))
            statements.append(.init(name: "read.tokens", parameters: [id]))
            statements.append(.init(name: "read.clients", parameters: [id]))
            statements.append(.init(name: "read.paused", parameters: [id]))
        }
        let outcomes = try query(statements)
        var sessions: [RecoveredSession] = []
        var problems: [String] = []
        var taken: [(String, Int64)] = []
        for (index, (id, token)) in zip(ordered, tokens).enumerated() {
            let base = index * 7
            guard let row = outcomes[base].rows.first else { continue }
            taken.append((id, token))
            guard var session = Self.session(row, snapshot: outcomes[base + 1].rows.first, problems: &problems) else {
                continue
            }
            for event in outcomes[base + 2].rows {
                Self.append(event, to: &session)
            }
            recoverAnswers(outcomes[base + 3].rows, into: &session, problems: &problems)
            session.readTokens(
                outcomes[base + 4].rows.first.flatMap { row in
                    Int64(row[0] ?? "").map { (UInt64(bitPattern: $0), Int64(row[1] ?? "")) }
                }
            )
            recoverClients(outcomes[base + 5].rows, into: &session, problems: &problems)
            session.effectsPaused = !outcomes[base + 6].rows.isEmpty
            if let damage = session.damage { problems.append("session \(id): \(damage)") }
            sessions.append(session)
        }
        state.withLock { state in
            for (id, token) in taken { state.owners[id] = token }
            for session in sessions { state.systems[session.creation.id] = session.creation.system }
        }
        for problem in problems { logger.warning("journal: \(problem)") }
        return sessions
    }

    public func recover() throws(JournalError) -> JournalRecovery {
        let ids = try query([.init(name: "ids", parameters: [])])[0].rows.compactMap { $0[0] }
        let sessions = try recover(only: Set(ids))
        logger.info("journal: recovered sessions", metadata: ["count": "\(sessions.count)"])
        return JournalRecovery(sessions: sessions, movedAside: nil, problems: [])
    }

    /// Columns of "take": id, system, epoch, state, created, crc, version; of "read.snapshot": rev, state, crc,
    /// version.
    static func session(
        _ row: [String?],
        snapshot: [String?]?,
        problems: inout [String]
    ) -> RecoveredSession? {
        let creation = SessionCreation(
            id: row[0] ?? "",
            system: row[1] ?? "",
            epoch: UInt64(bitPattern: Int64(row[2] ?? "") ?? 0),
            state: row[3] ?? "",
            createdAt: Double(row[4] ?? "") ?? 0,
            version: Int(row[6] ?? "") ?? 1
        )
        let stored = snapshot.flatMap { snapshot -> RecoveredSession.StoredSnapshot? in
            guard let revision = UInt64(snapshot[0] ?? ""), let state = snapshot[1] else { return nil }
            return .init(
                revision: revision,
                state: state,
                version: Int(snapshot[3] ?? "") ?? 1,
                checksum: Int64(snapshot[2] ?? "")
            )
        }
        return .checked(
            creation,
            generation: 0,
            creationChecksum: Int64(row[5] ?? ""),
            snapshot: stored,
            problems: &problems
        )
    }

    /// Columns: rev, origin, event, crc, version, at, state_sum: the event, when it follows on and passes its
    /// checksum (`RecoveredSession.follow`).
    static func append(_ row: [String?], to session: inout RecoveredSession) {
        guard let revision = UInt64(row[0] ?? "") else { return }
        let id = session.creation.id
        session.follow(revision) { event(row, revision: revision, of: id) }
    }

    /// The event of session `id` at `revision` from an events row (rev, origin, event, crc, version, time, state
    /// checksum, feedback); nil when it fails its checksum.
    static func event(_ row: [String?], revision: UInt64, of id: String) -> JournalEvent? {
        let origin = Int(row[1] ?? "") ?? -1
        let event = row[2] ?? ""
        let stamp = EventStamp(
            version: Int(row[4] ?? "") ?? 1,
            time: row[5].flatMap { Int64($0) },
            stateChecksum: row[6].flatMap { Int64($0) }.map { UInt64(bitPattern: $0) },
            feedback: row.count > 7 ? row[7] : nil
        )
        guard let eventOrigin = EventOrigin(rawValue: origin),
            RecordChecksum.event(id, revision, origin, EventText(event), stamp) == Int64(row[3] ?? "")
        else { return nil }
        return JournalEvent(revision: revision, event: event, origin: eventOrigin, stamp: stamp)
    }

    /// A keyed answer from a row whose first columns are session, key, fingerprint, epoch, rev, state.
    static func answer(from row: [String?]) -> KeyedAnswer {
        KeyedAnswer(
            sessionID: row[0] ?? "",
            key: row[1] ?? "",
            fingerprint: UInt64(bitPattern: Int64(row[2] ?? "") ?? 0),
            epoch: UInt64(bitPattern: Int64(row[3] ?? "") ?? 0),
            revision: UInt64(row[4] ?? "") ?? 0,
            state: row[5] ?? ""
        )
    }

    /// Columns: session, key, fingerprint, epoch, rev, state, crc; oldest first.
    private func recoverAnswers(_ rows: [[String?]], into session: inout RecoveredSession, problems: inout [String]) {
        var failed = 0
        for row in rows {
            let answer = Self.answer(from: row)
            guard RecordChecksum.answer(answer) == Int64(row[6] ?? "") else {
                failed += 1
                continue
            }
            guard answer.revision <= session.revision else { continue }
            session.answers.append(answer)
            if session.answers.count > max(configuration.answersPerSession, 1) { session.answers.removeFirst() }
        }
        if failed > 0 {
            problems.append("session \(session.creation.id): \(failed) keyed answers fail their checksum; dropped")
        }
    }
}

/// Histories for verification and export. PostgreSQL keeps a session's latest snapshot and the events after it (a
/// snapshot deletes the events it covers), so a history holds the initial state, that snapshot and those events.
extension PostgresJournal: SessionHistoryReading {
    public func sessionCount() throws(JournalError) -> Int {
        Int(try query([.init(name: "count", parameters: [])])[0].integer ?? 0)
    }

    public func readHistories(batchSize: Int, _ body: ([SessionHistory]) -> Void) throws(JournalError) {
        let ids = try query([.init(name: "ids", parameters: [])])[0].rows.compactMap { $0[0] }
        var start = 0
        while start < ids.count {
            let batch = Array(ids[start..<min(start + max(batchSize, 1), ids.count)])
            body(try histories(of: batch))
            start += batch.count
        }
    }

    public func history(of id: String) throws(JournalError) -> SessionHistory? {
        try histories(of: [id]).first
    }

    /// The histories of `ids` that the journal holds, in the order given, read in one transaction.
    private func histories(of ids: [String]) throws(JournalError) -> [SessionHistory] {
        var statements: [PostgresConnection.Statement] = []
        for id in ids {
            statements.append(.init(name: "peek", parameters: [id]))
            statements.append(.init(name: "read.snapshot", parameters: [id]))
            statements.append(.init(name: "read.events", parameters: [id]))
            statements.append(.init(name: "read.history", parameters: [id]))
        }
        let outcomes = try query(statements)
        var histories: [SessionHistory] = []
        for index in ids.indices {
            let base = index * 4
            guard let row = outcomes[base].rows.first else { continue }
            var problems: [String] = []
            guard let session = Self.session(row, snapshot: outcomes[base + 1].rows.first, problems: &problems) else {
                continue
            }
            // The initial state, the kept snapshots, the latest: each revision once, in order.
            var snapshots = [
                KeptSnapshot(revision: 0, version: session.creation.version, state: session.creation.state)
            ]
            for kept in outcomes[base + 3].rows {
                guard let revision = UInt64(kept[0] ?? ""), revision > snapshots[snapshots.count - 1].revision,
                    let state = kept[2]
                else { continue }
                let version = Int(kept[1] ?? "") ?? 1
                let crc = RecordChecksum.snapshot(session.creation.id, revision, state, version: version)
                guard crc == Int64(kept[3] ?? "") else {
                    problems.append("kept snapshot at revision \(revision) fails its checksum")
                    continue
                }
                snapshots.append(KeptSnapshot(revision: revision, version: version, state: state))
            }
            var history = SessionHistory(
                creation: session.creation,
                snapshots: snapshots,
                events: [],
                problems: problems
            )
            history.adoptLatest(
                KeptSnapshot(revision: session.baseRevision, version: session.baseVersion, state: session.baseState)
            )
            // Every kept event after the oldest kept snapshot (`append` follows on from the base revision).
            var withEvents = session
            withEvents.baseRevision = history.snapshots.count > 1 ? history.snapshots[1].revision : 0
            withEvents.events = []
            for event in outcomes[base + 2].rows { Self.append(event, to: &withEvents) }
            if let damage = withEvents.damage { history.problems.append("session \(session.creation.id): \(damage)") }
            history.events = withEvents.events
            histories.append(history)
        }
        return histories
    }

    /// Columns: session, client, seq, epoch, rev, status, answer, crc.
    private func recoverClients(_ rows: [[String?]], into session: inout RecoveredSession, problems: inout [String]) {
        var failed = 0
        for row in rows {
            let record = ClientSequence(
                sessionID: row[0] ?? "",
                client: row[1] ?? "",
                sequence: UInt64(bitPattern: Int64(row[2] ?? "") ?? 0),
                epoch: UInt64(bitPattern: Int64(row[3] ?? "") ?? 0),
                revision: UInt64(row[4] ?? "") ?? 0,
                status: Int(row[5] ?? "") ?? 0,
                answer: row[6] ?? ""
            )
            guard RecordChecksum.sequence(record) == Int64(row[7] ?? "") else {
                failed += 1
                continue
            }
            guard record.revision <= session.revision else { continue }
            session.clients.append(record)
        }
        if failed > 0 {
            problems.append("session \(session.creation.id): \(failed) client sequences fail their checksum; dropped")
        }
    }
}
