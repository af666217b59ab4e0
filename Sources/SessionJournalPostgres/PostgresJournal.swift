package import Dispatch
public import Logging
public import Metrics
public import SessionJournal
import Synchronization

/// A journal of sessions in one PostgreSQL database that every replica shares, with group commit and fencing.
///
/// Appends from any thread queue up; whenever the connection is idle, everything waiting is sent as one pipeline of
/// statements closed by one Sync, which PostgreSQL runs as one transaction: appends that arrive while a commit is in
/// flight share the next one. An append completes after the Sync's answer came back, that is after the commit
/// (`synchronous_commit` as the server has it, `on` by default: flushed to the server's WAL).
///
/// Fencing: this journal owns a session it created or read back, under a token (a random 64-bit number) it set as the
/// session's `owner` in the transaction that created or read it. Every record of an append carries the token and is
/// written by a function that checks it under a share lock on the session's row (`PostgresSchema`), so an append of a
/// superseded owner writes nothing and completes with `.fenced`, while the appends it shared a commit with are written.
/// A passivation (`JournalRecord.settled` with a revision) lets the session go, so that any replica may activate it.
///
/// A failed commit is sticky, as in `Journal`: every append fails until a test write succeeds (`.failing` health).
/// A broken connection is opened again by the test writes.
///
/// Concurrency: every method may be called from any thread but the journal's queue. The connection, the timers and
/// the statistics belong to one serial `DispatchQueue`; libpq runs there in non-blocking mode, woken by the socket's
/// DispatchSources, so no thread waits on the database while a commit is in flight. The waiting work, the health and
/// the owner tokens are under a `Mutex`. Reads (`recover(only:)`, the deadline queries) wait on a semaphore for their
/// turn on the connection, as `Journal`'s reads wait for its writer queue. Completions run on the queue in commit
/// order.
public final class PostgresJournal: SessionJournaling, @unchecked Sendable {
    typealias Outcomes = Result<[PostgresOutcome], JournalError>

    struct Append {
        var records: [JournalRecord]
        /// The owner token each record is written under (nil: none held).
        var owners: [Int64?]
        var completion: @Sendable (Result<Void, JournalError>) -> Void
    }

    enum Job {
        case appends([Append])
        case query([PostgresConnection.Statement], @Sendable (Outcomes) -> Void)

        /// A lookup of whether this journal owns a session (`confirmOwnership`).
        var isOwnershipCheck: Bool {
            if case .query(let statements, _) = self {
                return statements.count == 1 && statements[0].name == "owner.check"
            }
            return false
        }

        var isRenewal: Bool {
            if case .query(let statements, _) = self { return statements.first?.name == "renew" }
            return false
        }
    }

    struct State {
        var jobs: [Job] = []
        var scheduled = false
        var closed = false
        var failure: JournalError?
        var healthHandler: (@Sendable (JournalHealth) -> Void)?
        /// The sessions this journal owns, by id, and their tokens.
        var owners: [String: Int64] = [:]
        /// The systems of the sessions this journal took or created, for a system's own history retention.
        var systems: [String: String] = [:]
        var statistics = JournalStatistics()
    }

    public let fingerprintKey: [UInt8]
    /// This journal's replica id: the `holder` of the sessions it owns, renewing its lease in `fh_replicas`.
    let replica = Int64.random(in: 1...Int64.max)
    /// How long a replica's sessions count as held after its last renewal (see `PostgresSchema`).
    public let leaseMilliseconds: Int
    /// The configuration the journal was opened with (`answersPerSession`, `probeIntervalMilliseconds` apply).
    public let configuration: JournalConfiguration
    package let metrics: JournalMetrics
    package let logger: Logger
    package let queue = DispatchQueue(label: "PostgresJournal")
    let state = Mutex(State())
    private let parameters: [(String, String)]
    /// Owned by `queue`.
    private var connection: PostgresConnection?
    var running = false
    /// Set by `close()`: jobs left then fail with `.closed` instead of reconnecting.
    private var finished = false
    /// Keyed answers written per session since this journal took it, for their trimming (`statement(_:owner:)`). Owned
    /// by `queue`.
    var answerCounts: [String: Int] = [:]
    package var probeTimer: (any DispatchSourceTimer)?
    private var leaseTimer: (any DispatchSourceTimer)?
    var probes = 0

    /// Connects to the database `url` (`postgres://USER@HOST:PORT/DB`, anything libpq reads) with `password` when
    /// given (else libpq's own sources: `PGPASSWORD`, `~/.pgpass`), creates the schema when missing, and reads or makes
    /// the fingerprint key. Throws when the server cannot be reached or refuses. The journal renews its replica's
    /// lease every quarter of `leaseMilliseconds`; a replica that stops renewing (killed, stalled) leaves the due timers
    /// of its sessions to the others after that long.
    public static func open(
        url: String,
        password: String? = nil,
        configuration: JournalConfiguration = JournalConfiguration(),
        leaseMilliseconds: Int = 5000,
        logger: Logger,
        metricsFactory: any MetricsFactory = MetricsSystem.factory
    ) throws(JournalError) -> PostgresJournal {
        var parameters = [("dbname", url), ("application_name", "feedback-host")]
        if !url.contains("connect_timeout") { parameters.append(("connect_timeout", "5")) }
        if let password { parameters.append(("password", password)) }
        let queue = DispatchQueue(label: "PostgresJournal.open")
        let connection = try PostgresConnection(parameters: parameters, queue: queue)
        let key: [UInt8]
        do throws(JournalError) {
            try connection.execute(PostgresSchema.create)
            let version = try connection.execute(PostgresSchema.readMeta + "'schema.version'").first?.first ?? nil
            guard version == PostgresSchema.version else {
                throw JournalError(
                    .postgres,
                    "the database holds journal schema version \(version ?? "?"); this build reads version "
                        + "\(PostgresSchema.version)"
                )
            }
            try connection.execute(
                "INSERT INTO fh_meta VALUES('\(PostgresSchema.fingerprintKeyName)', '\(Hex.encode(Hex.randomKey()))') "
                    + "ON CONFLICT DO NOTHING"
            )
            let text = try connection.execute(PostgresSchema.readMeta + "'\(PostgresSchema.fingerprintKeyName)'")
            guard let hex = text.first?.first ?? nil, let decoded = Hex.decode(hex), decoded.count == 16 else {
                throw JournalError(.postgres, "the fingerprint key in fh_meta is missing or damaged")
            }
            key = decoded
            try adoptKeyedFingerprints(connection)
        } catch {
            queue.sync { connection.close() }
            throw error
        }
        queue.sync { connection.close() }
        let journal = PostgresJournal(
            parameters: parameters,
            leaseMilliseconds: max(leaseMilliseconds, 4),
            configuration: configuration,
            fingerprintKey: key,
            metrics: JournalMetrics(factory: metricsFactory),
            logger: logger
        )
        let connected = journal.queue.sync { () -> Result<Void, JournalError> in
            do throws(JournalError) {
                return .success(try journal.connect())
            } catch {
                return .failure(error)
            }
        }
        try connected.get()
        _ = try journal.query([.init(name: "renew", parameters: [String(journal.replica)])])
        journal.queue.sync { journal.startRenewing() }
        return journal
    }

    private init(
        parameters: [(String, String)],
        leaseMilliseconds: Int,
        configuration: JournalConfiguration,
        fingerprintKey: [UInt8],
        metrics: JournalMetrics,
        logger: Logger
    ) {
        self.parameters = parameters
        self.leaseMilliseconds = leaseMilliseconds
        self.configuration = configuration
        self.fingerprintKey = fingerprintKey
        self.metrics = metrics
        self.logger = logger
        metrics.report(nil)
    }

    /// A connection with the statements prepared, in pipeline mode; on the queue (it blocks it while connecting).
    private func connect() throws(JournalError) {
        dispatchPrecondition(condition: .onQueue(queue))
        connection?.close()
        connection = nil
        let made = try PostgresConnection(
            parameters: parameters,
            queue: queue,
            answerTimeout: .milliseconds(max(configuration.answerTimeoutMilliseconds, 1))
        )
        do throws(JournalError) {
            for (name, sql) in PostgresSchema.statements {
                try made.prepare(name, sql)
            }
            try made.start()
        } catch {
            made.close()
            throw error
        }
        connection = made
    }

    /// Renews the lease every quarter of it, in turn with the appends, without waiting.
    private func startRenewing() {
        dispatchPrecondition(condition: .onQueue(queue))
        let every = leaseMilliseconds / 4
        let timer = DispatchSource.makeTimerSource(queue: queue)
        timer.schedule(deadline: .now() + .milliseconds(every), repeating: .milliseconds(every))
        let renew = PostgresConnection.Statement(name: "renew", parameters: [String(replica)])
        timer.setEventHandler { [weak self] in
            guard let self else { return }
            let schedule = state.withLock { state -> Bool? in
                // One renewal waiting is enough (a stalled connection must not pile them up).
                guard !state.closed, !state.jobs.contains(where: \.isRenewal) else { return nil }
                state.jobs.append(.query([renew], { _ in }))
                return Self.schedule(&state)
            }
            if schedule == true { pump() }
        }
        leaseTimer = timer
        timer.resume()
    }

    // MARK: Appends

    public func append(_ records: [JournalRecord], completion: @escaping @Sendable (Result<Void, JournalError>) -> Void)
    {
        let schedule = state.withLock { state -> Bool? in
            guard !state.closed else { return nil }
            let append = Append(
                records: records,
                owners: Self.owners(of: records, &state.owners),
                completion: completion
            )
            if case .appends(var appends) = state.jobs.last {
                appends.append(append)
                state.jobs[state.jobs.count - 1] = .appends(appends)
            } else {
                state.jobs.append(.appends([append]))
            }
            return Self.schedule(&state)
        }
        switch schedule {
        // On the queue even now, as every completion: a caller may append under a lock its completion takes.
        case nil: queue.async { completion(.failure(JournalError(.closed, "the journal is closed"))) }
        case true?: queue.async { self.pump() }
        case false?: break
        }
    }

    /// The token each record is written under, taking or letting go of sessions as the records say.
    private static func owners(of records: [JournalRecord], _ owners: inout [String: Int64]) -> [Int64?] {
        records.map { record in
            switch record {
            case .created(let creation):
                let token = Int64.random(in: 1...Int64.max)
                owners[creation.id] = token
                return token
            case .settled(let id, _?), .removed(let id):
                return owners.removeValue(forKey: id)
            case .event(let id, _, _, _, _), .snapshot(let id, _, _, _), .deadline(let id, _), .settled(let id, nil),
                .tokens(let id, _), .clientForgotten(let id, _), .paused(let id, _):
                return owners[id]
            case .answered(let answer):
                return owners[answer.sessionID]
            case .sequenced(let record):
                return owners[record.sessionID]
            }
        }
    }

    /// At most this many ownership checks go in one query.
    static let ownershipChecksPerQuery = 256

    /// One query of the statements of `jobs` (single-statement ownership checks), whose outcomes go back to each.
    private static func merged(_ jobs: [Job]) -> Job {
        var statements: [PostgresConnection.Statement] = []
        var completions: [@Sendable (Outcomes) -> Void] = []
        for case .query(let parts, let completion) in jobs {
            statements += parts
            completions.append(completion)
        }
        let each = completions
        return .query(statements) { outcomes in
            for (index, completion) in each.enumerated() {
                completion(
                    outcomes.flatMap { outcomes in
                        guard outcomes.indices.contains(index) else {
                            return .failure(JournalError(.postgres, "PostgreSQL gave no answer to an ownership check"))
                        }
                        return .success([outcomes[index]])
                    }
                )
            }
        }
    }

    private static func schedule(_ state: inout State) -> Bool {
        if state.scheduled { return false }
        state.scheduled = true
        return true
    }

    /// Runs the next job when the connection is idle; each job's end runs the one after.
    private func pump() {
        dispatchPrecondition(condition: .onQueue(queue))
        guard !running else { return }
        guard !finished else { return failLeftovers() }
        let next = state.withLock { state -> (Job, JournalError?)? in
            guard !state.jobs.isEmpty else {
                state.scheduled = false
                return nil
            }
            let job = state.jobs.removeFirst()
            guard job.isOwnershipCheck else { return (job, state.failure) }
            // Ownership checks waiting one after another (reads of sessions in memory) share one round trip.
            var checks = [job]
            while checks.count < Self.ownershipChecksPerQuery, state.jobs.first?.isOwnershipCheck == true {
                checks.append(state.jobs.removeFirst())
            }
            return (checks.count == 1 ? job : Self.merged(checks), state.failure)
        }
        guard let (job, failure) = next else { return }
        switch job {
        case .appends(let appends):
            if let failure {
                let refused = Result<Void, JournalError>.failure(Journal.unavailable(failure))
                for append in appends { append.completion(refused) }
                return pump()
            }
            commit(appends)
        case .query(let statements, let completion):
            run(statements) { outcomes in completion(outcomes) }
        }
    }

    /// Runs `statements` on the connection (opened again first when it broke), then the next job.
    func run(_ statements: [PostgresConnection.Statement], then completion: @escaping (Outcomes) -> Void) {
        dispatchPrecondition(condition: .onQueue(queue))
        guard !statements.isEmpty else {
            completion(.success([]))
            return pump()
        }
        if connection?.isUsable != true {
            do throws(JournalError) {
                try connect()
            } catch {
                completion(.failure(error))
                return pump()
            }
        }
        running = true
        connection!.run(statements) { [self] outcomes in
            running = false
            completion(outcomes)
            pump()
        }
    }

    private func commit(_ appends: [Append]) {
        var plan = CommitPlan()
        var records = 0
        for (index, append) in appends.enumerated() {
            for (record, owner) in zip(append.records, append.owners) {
                plan.add(statement(record, owner: owner), of: index)
            }
            records += append.records.count
        }
        plan.finish()
        let start = DispatchTime.now().uptimeNanoseconds
        run(plan.statements) { [self] result in
            let outcomes: [PostgresOutcome]
            do throws(JournalError) {
                outcomes = try result.get()
                if let error = outcomes.lazy.compactMap(\.error).first { throw error }
            } catch {
                return failed(appends, error, records: records)
            }
            metrics.commitDuration.recordNanoseconds(Int64(DispatchTime.now().uptimeNanoseconds - start))
            metrics.committed.increment()
            metrics.records.increment(by: records)
            metrics.batchRecords.record(records)
            metrics.batchAppends.record(appends.count)
            state.withLock { state in
                state.statistics.commits += 1
                state.statistics.records += records
            }
            let refused = plan.refused(outcomes)
            for (index, append) in appends.enumerated() {
                guard refused.contains(index) else {
                    append.completion(.success(()))
                    continue
                }
                let id = Self.sessionID(of: append.records.first!)
                state.withLock { state in
                    if state.owners[id] == append.owners.first ?? nil { state.owners[id] = nil }
                }
                answerCounts[id] = nil  // another replica writes its answers now: counted afresh if it comes back
                append.completion(
                    .failure(JournalError(.fenced, "session \(id) is owned by another replica now; nothing written"))
                )
            }
        }
    }

    private func failed(_ appends: [Append], _ error: JournalError, records: Int) {
        metrics.failed.increment()
        logger.error("journal: commit failed", metadata: ["error": "\(error)", "records": "\(records)"])
        let handler = state.withLock { state in
            state.failure = error
            state.statistics.failedCommits += 1
            return state.healthHandler
        }
        for append in appends { append.completion(.failure(error)) }
        becameUnhealthy(error, handler: handler)
    }

    // MARK: Reads

    /// How long a read waits for its turn and its answer before it fails.
    static let readTimeoutSeconds = 10

    /// Runs `statements` as one transaction in turn with the appends (after those queued before) and waits for them,
    /// at most `readTimeoutSeconds`.
    func query(_ statements: [PostgresConnection.Statement]) throws(JournalError) -> [PostgresOutcome] {
        dispatchPrecondition(condition: .notOnQueue(queue))
        let box = Mutex<Outcomes?>(nil)
        let done = DispatchSemaphore(value: 0)
        var refused: JournalError?
        enqueue(
            .query(statements) { outcomes in
                box.withLock { $0 = outcomes }
                done.signal()
            }
        ) { refused = $0 }
        if let refused { throw refused }
        // A database that stopped answering (stalled, partitioned) must not hold a request's thread for good.
        guard done.wait(timeout: .now() + .seconds(Self.readTimeoutSeconds)) == .success else {
            throw JournalError(.postgres, "PostgreSQL did not answer within \(Self.readTimeoutSeconds) s")
        }
        let outcomes = try box.withLock { $0 }!.get()
        if let error = outcomes.lazy.compactMap(\.error).first { throw error }
        return outcomes
    }

    /// Queues `job` and schedules the queue's pump; `closed` is called instead when the journal is closed.
    func enqueue(_ job: Job, closed: (JournalError) -> Void) {
        let schedule = state.withLock { state -> Bool? in
            guard !state.closed else { return nil }
            state.jobs.append(job)
            return Self.schedule(&state)
        }
        switch schedule {
        case nil: closed(JournalError(.closed, "the journal is closed"))
        case true?: queue.async { self.pump() }
        case false?: break
        }
    }

    public var health: JournalHealth {
        state.withLock { state in state.failure.map { .failing($0) } ?? .healthy }
    }

    public func onHealthChange(_ handler: @escaping @Sendable (JournalHealth) -> Void) {
        state.withLock { $0.healthHandler = handler }
    }

    public var statistics: JournalStatistics {
        state.withLock { $0.statistics }
    }
    /// No gathering window here: each commit starts as soon as the one before it is done.
    public var whenWritersIdle: (@Sendable () -> Void)? { nil }

    public func close() {
        let waiting = state.withLock { state -> Bool in
            let was = state.closed
            state.closed = true
            return !was
        }
        guard waiting else { return }
        // A barrier behind every job queued before the close; the lease goes with it (a replica that closed holds
        // nothing: a graceful shutdown passivated its sessions).
        let done = DispatchSemaphore(value: 0)
        let schedule = state.withLock { state -> Bool in
            state.jobs.append(.query([.init(name: "retire", parameters: [String(replica)])]) { _ in done.signal() })
            return Self.schedule(&state)
        }
        if schedule { queue.async { self.pump() } }
        // Bounded: a database that stopped answering must not stop a shutdown (the appends in flight then fail).
        _ = done.wait(timeout: .now() + .seconds(Self.readTimeoutSeconds))
        queue.sync {
            finished = true
            probeTimer?.cancel()
            probeTimer = nil
            leaseTimer?.cancel()
            leaseTimer = nil
            connection?.close()
            connection = nil
            failLeftovers()
        }
    }

    /// After `close()`: whatever is still queued fails with `.closed`.
    private func failLeftovers() {
        let closed = JournalError(.closed, "the journal is closed")
        let jobs = state.withLock { state in
            defer { state.jobs = [] }
            state.scheduled = false
            return state.jobs
        }
        for job in jobs {
            switch job {
            case .appends(let appends):
                for append in appends { append.completion(.failure(closed)) }
            case .query(_, let completion):
                completion(.failure(closed))
            }
        }
    }

}

extension PostgresOutcome {
    /// The first column of the first row as an integer, nil when there is none or it is NULL.
    var integer: Int64? { rows.first?.first.flatMap { $0 }.flatMap { Int64($0) } }
}
