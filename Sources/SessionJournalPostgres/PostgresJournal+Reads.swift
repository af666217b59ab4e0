import CoreMetrics
public import SessionJournal
import Synchronization

/// The reads the service makes besides activations: the session count, the deadline index, compaction.
///
/// Concurrency: called from any thread but the journal's queue; each waits for its turn there (`query`).
extension PostgresJournal {
    public func start() throws(JournalError) -> JournalRecovery.Summary {
        let count = try query([.init(name: "count", parameters: [])])[0].integer ?? 0
        return JournalRecovery.Summary(sessions: Int(count), movedAside: nil, problems: [])
    }

    public func deadlines(through time: Int64, limit: Int) throws(JournalError) -> [JournalDeadline] {
        try deadlines("due", time, limit)
    }

    public func deadlines(after time: Int64, limit: Int) throws(JournalError) -> [JournalDeadline] {
        try deadlines("upcoming", time, limit)
    }

    private func deadlines(_ statement: String, _ time: Int64, _ limit: Int) throws(JournalError) -> [JournalDeadline] {
        let parameters = [String(time), String(limit), String(leaseMilliseconds)]
        let rows = try query([.init(name: statement, parameters: parameters)])[0].rows
        return rows.compactMap { row in
            guard let id = row[0], let at = row[1].flatMap({ Int64($0) }) else { return nil }
            return JournalDeadline(sessionID: id, at: at)
        }
    }

    public func deadlineCount() throws(JournalError) -> Int {
        Int(try query([.init(name: "deadlines", parameters: [])])[0].integer ?? 0)
    }

    public func stampActivity(at time: Int64) throws(JournalError) -> Int {
        try query([.init(name: "activity.stamp", parameters: [String(time)])])[0].affected
    }

    public func abandonedSessions(before time: Int64, limit: Int) throws(JournalError) -> [String] {
        let statement = PostgresConnection.Statement(
            name: "activity.abandoned",
            parameters: [String(time), String(limit), String(leaseMilliseconds)]
        )
        return try query([statement])[0].rows.compactMap { $0[0] }
    }

    public func touchActivity(of ids: [String], at time: Int64) throws(JournalError) {
        guard !ids.isEmpty else { return }
        _ = try query(ids.map { .init(name: "activity.touch", parameters: [$0, String(time)]) })
    }

    public func retire(_ ids: [String], leftBefore time: Int64) throws(JournalError) -> [String] {
        guard !ids.isEmpty else { return [] }
        let outcomes = try query(
            ids.map { .init(name: "session.retire", parameters: [$0, String(time), String(leaseMilliseconds)]) }
        )
        return zip(ids, outcomes).compactMap { id, outcome in outcome.rows.first?[0] == "t" ? id : nil }
    }

    /// Every replica of a deployment journals here and may take any session over.
    public var sharesSessions: Bool { true }

    public func confirmOwnership(
        of id: String,
        completion: @escaping @Sendable (Result<Bool, JournalError>) -> Void
    ) {
        guard let token = state.withLock({ $0.owners[id] }) else { return completion(.success(false)) }
        let owns = PostgresConnection.Statement(name: "owner.check", parameters: [id, String(token)])
        enqueue(
            .query([owns]) { outcomes in
                completion(
                    outcomes.flatMap { outcomes in
                        if let error = outcomes.first?.error { return .failure(error) }
                        return .success(outcomes.first?.rows.first?[0] == "t")
                    }
                )
            }
        ) { completion(.failure($0)) }
    }

    public func adoptTokenGenerations(_ generations: [String: UInt64]) throws(JournalError) -> [String] {
        let ordered = generations.filter { $0.value > 0 }.sorted { $0.key < $1.key }
        guard !ordered.isEmpty else { return [] }
        let outcomes = try query(
            ordered.map { id, generation in
                .init(
                    name: "tokens.adopt",
                    parameters: [
                        id, String(Int64(bitPattern: generation)), String(RecordChecksum.tokens(id, generation)),
                    ]
                )
            }
        )
        let raised = zip(ordered, outcomes).filter { $0.1.rows.first?.first == "t" }.map(\.0.key)
        // Let go: this replica's copies, if any, are read back at their next use.
        state.withLock { state in
            for id in raised { state.owners[id] = nil }
        }
        return raised
    }

    public func compact() throws(JournalError) -> CompactionReport {
        let outcomes = try query([
            .init(name: "compact.events", parameters: []),
            .init(name: "compact.snapshots", parameters: []),
            .init(name: "compact.answers", parameters: [String(max(configuration.answersPerSession, 1))]),
            .init(name: "compact.deadlines", parameters: []),
            .init(name: "compact.history", parameters: []),
            .init(name: "compact.tokens", parameters: []),
            .init(name: "compact.quarantine", parameters: []),
            .init(name: "compact.clients", parameters: []),
            .init(name: "compact.paused", parameters: []),
            .init(name: "bytes", parameters: []),
        ])
        let bytes = outcomes.last?.integer ?? 0
        metrics.fullCompactions.increment()
        metrics.bytes.record(bytes)
        return CompactionReport(
            deletedEvents: outcomes[0].affected,
            deletedSnapshots: outcomes[1].affected,
            deletedAnswers: outcomes[2].affected,
            vacuumed: false,
            bytes: bytes
        )
    }
}
