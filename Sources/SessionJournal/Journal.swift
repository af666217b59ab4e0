package import Dispatch
import Glibc
public import Logging
public import Metrics
import Synchronization

/// A durable journal of hosted sessions on SQLite in WAL mode, with group commit.
///
/// Appends from any thread queue up; one writer commits everything that is waiting in one transaction, so
/// appends that arrive while a commit is in flight share the next one. An append completes only after its
/// transaction committed and, under `FsyncPolicy.perCommit`, was synced; under `.interval` a timer syncs.
///
/// A failed commit is sticky: the journal becomes `.failing`, and every append waiting or made after it fails
/// without being tried, until a test write (`probeIntervalMilliseconds` apart) succeeds; only appends made after
/// that are committed again. So an append that completes with success never follows a lost one of the same
/// writer unless that writer saw the failure first. The health changes go to `onHealthChange`, a log line and
/// the `journal_healthy` / `journal_failing{cause}` gauges. One process holds the data directory at a time
/// (`DataDirectoryLock`).
///
/// Concurrency: `append`, `compact`, `recover`, `statistics` and `close` may be called from any thread.
/// The SQLite connection, its prepared statements and the sync timer belong to one serial `DispatchQueue`
/// (the writer queue); every SQLite call runs there. The pending batch is guarded by a `Mutex`. Completion
/// handlers run on the writer queue, in commit order: they must be short and must not wait for the journal.
/// Metrics (see `JournalMetrics`) are updated on the writer queue.
public final class Journal: @unchecked Sendable {
    /// A completion handler of an append.
    public typealias Completion = @Sendable (Result<Void, JournalError>) -> Void

    /// An append's completion as the pending batch holds it. In a struct: an array of bare function values holds
    /// each one re-wrapped for its generic storage, an allocation per append.
    struct Waiting {
        let completion: Completion
    }

    struct Pending {
        var records: [JournalRecord] = []
        var completions: [Waiting] = []
        var scheduled = false
        var closed = false
        /// The error of the failed commit while the journal cannot commit; nil while it is healthy.
        var failure: JournalError?
        var healthHandler: (@Sendable (JournalHealth) -> Void)?
        /// The writer is in its gathering window, which an append ends once `gathered` appends wait.
        var gathering = false
        var gathered = Int.max
        /// An append ended the window: the writer takes the wake-up it was sent.
        var woken = false

        /// Ends the open window (true: the writer must be signalled); false when none is open.
        mutating func endWindow() -> Bool {
            guard gathering else { return false }
            gathering = false
            woken = true
            return true
        }
    }

    /// The configuration the journal was opened with.
    public let configuration: JournalConfiguration
    /// The database file's path.
    public let path: String
    /// A random 16-byte key made once with the journal file and kept in it: key the fingerprints of idempotent
    /// requests with it, so that they compare equal across restarts and a client cannot predict them.
    public let fingerprintKey: [UInt8]
    /// Histogram buckets for the journal's batch-size recorders, by metric name, for a factory that asks (the
    /// Prometheus factory's defaults suit seconds, not counts).
    public static let batchSizeBuckets: [String: [Double]] = Dictionary(
        uniqueKeysWithValues: JournalMetrics.batchHistograms.map { ($0, JournalMetrics.batchBuckets) }
    )
    package let metrics: JournalMetrics
    package let queue = DispatchQueue(label: "Journal.writer")
    let pending = Mutex(Pending())
    /// What the writer sleeps on in its gathering window; an append that fills the window signals it.
    private let windowEnd = DispatchSemaphore(value: 0)
    /// The appends of the last few commits, for the window's end: a batch as large as the largest of them is all a
    /// window waits for (touched on the writer queue only).
    private var recentBatches = (0, 0, 0, 0)
    package let logger: Logger
    /// Owned by `queue`.
    var store: JournalStore?
    private var syncTimer: (any DispatchSourceTimer)?
    private var compactionTimer: (any DispatchSourceTimer)?
    /// A catch-up tick is queued behind the next commit (`catchUpIfBehind`; owned by `queue`).
    private var catchUpQueued = false
    package var probeTimer: (any DispatchSourceTimer)?
    private var openProblems: [String]
    private let movedAside: String?
    private let lock: DataDirectoryLock

    /// Opens (or creates) the journal in `directory`, checking it first; a file that fails SQLite's checks is
    /// moved aside and salvaged (see `recover()` for what was found). Throws when the directory or a fresh
    /// database cannot be used. Metrics go to `metricsFactory` (the process-wide one unless given).
    public static func open(
        directory: String,
        configuration: JournalConfiguration = JournalConfiguration(),
        logger: Logger,
        metricsFactory: any MetricsFactory = MetricsSystem.factory
    ) throws(JournalError) -> Journal {
        var problems: [String] = []
        let opened = try JournalOpener.open(directory: directory, configuration: configuration, problems: &problems)
        for problem in problems {
            logger.warning("journal: \(problem)")
        }
        let key: [UInt8]
        do {
            key = try opened.store.fingerprintKey()
        } catch {
            opened.store.close()
            throw error
        }
        return Journal(
            store: opened.store,
            lock: opened.lock,
            movedAside: opened.movedAside,
            problems: problems,
            path: directory + "/" + configuration.fileName,
            configuration: configuration,
            fingerprintKey: key,
            metrics: JournalMetrics(factory: metricsFactory),
            logger: logger
        )
    }

    private init(
        store: JournalStore,
        lock: DataDirectoryLock,
        movedAside: String?,
        problems: [String],
        path: String,
        configuration: JournalConfiguration,
        fingerprintKey: [UInt8],
        metrics: JournalMetrics,
        logger: Logger
    ) {
        self.store = store
        self.lock = lock
        self.fingerprintKey = fingerprintKey
        self.metrics = metrics
        metrics.bytes.record(store.fileBytes())
        metrics.report(nil)
        self.movedAside = movedAside
        self.openProblems = problems
        self.path = path
        self.configuration = configuration
        self.logger = logger
        if case .interval(let milliseconds) = configuration.fsync {
            let timer = DispatchSource.makeTimerSource(queue: queue)
            timer.schedule(deadline: .now() + .milliseconds(milliseconds), repeating: .milliseconds(milliseconds))
            timer.setEventHandler { [weak self] in self?.syncOnQueue() }
            syncTimer = timer
            timer.resume()
        }
        let every = configuration.compactionIntervalMilliseconds
        if every > 0 {
            let timer = DispatchSource.makeTimerSource(queue: queue)
            timer.schedule(deadline: .now() + .milliseconds(every), repeating: .milliseconds(every))
            timer.setEventHandler { [weak self] in self?.compactOnQueue() }
            compactionTimer = timer
            timer.resume()
        }
    }

    /// Ends the gathering window now when one is open with appends waiting: nothing more can join it until a client
    /// sends another post (every writer has gone idle), and meanwhile the CPU would idle beside a commit that has not
    /// started. Any thread.
    public func endGatheringWindow() {
        if pending.withLock({ !$0.completions.isEmpty && $0.endWindow() }) { windowEnd.signal() }
    }

    /// What ends the gathering window when the writers go idle (`endGatheringWindow`); nil when the journal has no
    /// window (`commitDelayMicroseconds` 0), so that nothing listens for idleness in vain.
    public var whenWritersIdle: (@Sendable () -> Void)? {
        guard configuration.commitDelayMicroseconds > 0 else { return nil }
        return { @Sendable [self] in endGatheringWindow() }
    }

    /// Queues `records` for the next group commit; `completion` runs on the writer queue once they are
    /// durable under the fsync policy, or with the error that rolled their transaction back, or with
    /// `.unavailable` when an earlier commit failed and the journal has not written successfully since. Completions
    /// run in the order of their appends.
    public func append(_ records: [JournalRecord], completion: @escaping Completion) {
        var wake = false
        let schedule = pending.withLock { state -> Bool? in
            guard !state.closed else { return nil }
            // Through a buffer pointer: `append(contentsOf:)` takes an array as its own (a retain and a release).
            records.withUnsafeBufferPointer { state.records.append(contentsOf: $0) }
            state.completions.append(Waiting(completion: completion))
            if state.completions.count >= state.gathered { wake = state.endWindow() }
            if state.scheduled { return false }
            state.scheduled = true
            return true
        }
        if wake { windowEnd.signal() }
        switch schedule {
        // On the queue even now, as every completion: a caller may append under a lock its completion takes
        // (`SessionRecorder`), which a completion run here would take a second time.
        case nil: queue.async { completion(.failure(JournalError(.closed, "the journal is closed"))) }
        case true?: queue.async { self.commitNext() }
        case false?: break
        }
    }

    /// Reads every live session back: its latest snapshot (or initial state) and the events after it.
    /// Run it once after `open`, before new appends.
    public func recover() throws(JournalError) -> JournalRecovery {
        let result = queue.sync { () -> Result<JournalRecovery, JournalError> in
            guard let store else { return .failure(JournalError(.closed, "the journal is closed")) }
            var problems = openProblems
            openProblems = []
            let start = ContinuousClock.now
            do throws(JournalError) {
                let sessions = try store.recover(problems: &problems)
                logger.info(
                    "journal: recovered sessions",
                    metadata: ["count": "\(sessions.count)", "duration": "\(ContinuousClock.now - start)"]
                )
                for problem in problems where !problem.hasPrefix("journal ") && !problem.hasPrefix("salvage") {
                    logger.warning("journal: \(problem)")
                }
                return .success(JournalRecovery(sessions: sessions, movedAside: movedAside, problems: problems))
            } catch {
                return .failure(error)
            }
        }
        return try result.get()
    }

    /// Reads the live sessions among `ids` back, as `recover()` does for all, each through the indexes: what a passive
    /// session is activated from and a session whose writes failed is re-anchored from. Runs on the writer queue
    /// between commits; appends made before the call are written first. What it finds damaged is logged.
    public func recover(only ids: Set<String>) throws(JournalError) -> [RecoveredSession] {
        try withStore { store throws(JournalError) in
            var problems: [String] = []
            let sessions = try store.recover(problems: &problems, only: ids)
            for problem in problems { logger.warning("journal: \(problem)") }
            return sessions
        }
    }

    /// What opening found, without reading any session back: how many sessions the journal holds, and what was
    /// detected and repaired (logged here). The server starts with this and activates each session on demand
    /// (`recover(only:)`). Run it once after `open`.
    public func start() throws(JournalError) -> JournalRecovery.Summary {
        let result = queue.sync { () -> Result<JournalRecovery.Summary, JournalError> in
            guard let store else { return .failure(JournalError(.closed, "the journal is closed")) }
            let problems = openProblems
            openProblems = []
            for problem in problems where !problem.hasPrefix("journal ") && !problem.hasPrefix("salvage") {
                logger.warning("journal: \(problem)")
            }
            do throws(JournalError) {
                let count = Int(try store.connection.integer("SELECT count(*) FROM sessions"))
                return .success(JournalRecovery.Summary(sessions: count, movedAside: movedAside, problems: problems))
            } catch {
                return .failure(error)
            }
        }
        return try result.get()
    }

    /// Whether the journal can commit: `.failing` from a failed commit until a test write succeeds.
    public var health: JournalHealth {
        pending.withLock { state in state.failure.map { .failing($0) } ?? .healthy }
    }

    /// Calls `handler` on the writer queue at each change of `health`, after the completions of the commit that
    /// failed (so every append that failed has been told first). One handler; a later call replaces it.
    public func onHealthChange(_ handler: @escaping @Sendable (JournalHealth) -> Void) {
        pending.withLock { $0.healthHandler = handler }
    }

    /// Counters of the journal's work so far.
    public var statistics: JournalStatistics {
        queue.sync { store?.statistics ?? JournalStatistics() }
    }

    /// Commits what is waiting, stops the timers, closes the database (SQLite checkpoints the WAL into the
    /// database file and deletes it) and releases the data directory. Later appends fail with `.closed`. Blocks
    /// until done.
    public func close() {
        // A gathering window ends at once: nothing more will join the commit it waits for.
        let waking = pending.withLock { state -> Bool in
            state.closed = true
            return state.endWindow()
        }
        if waking { windowEnd.signal() }
        queue.sync {
            while commitBatch() != nil {}
            for timer in [syncTimer, compactionTimer, probeTimer] { timer?.cancel() }
            syncTimer = nil
            compactionTimer = nil
            probeTimer = nil
            store?.close()
            store = nil
            lock.release()
        }
    }

    /// Runs `body` on the writer queue with the store, between group commits.
    func withStore<T>(_ body: (JournalStore) throws(JournalError) -> T) throws(JournalError) -> T {
        let result = queue.sync { () -> Result<T, JournalError> in
            guard let store else { return .failure(JournalError(.closed, "the journal is closed")) }
            do throws(JournalError) {
                return .success(try body(store))
            } catch {
                return .failure(error)
            }
        }
        return try result.get()
    }

    /// One group commit per queue item, so that compaction and syncs interleave with a steady stream.
    private func commitNext() {
        dispatchPrecondition(condition: .onQueue(queue))
        guard let appends = commitBatch() else { return }
        let delay = configuration.commitDelayMicroseconds
        recentBatches = (appends, recentBatches.0, recentBatches.1, recentBatches.2)
        if delay > 0, appends >= configuration.commitDelaySiblings {
            // The window is waited out on the writer queue, not set as a Dispatch timer: a timer costs its manager
            // thread's wake-up and a second hop per commit. Work queued meanwhile (a read, compaction) runs after
            // the next commit, at most the window later. It ends early once as many appends wait as the largest of
            // the last commits carried: in a steady stream the batch is then whole, and waiting longer only leaves
            // the server idle (every post in flight waiting for this commit).
            let enough = max(recentBatches.0, recentBatches.1, recentBatches.2, recentBatches.3)
            let full = pending.withLock { state -> Bool in
                // A closing journal waits for nothing more.
                if state.closed || state.completions.count >= enough { return true }
                state.gathering = true
                state.gathered = enough
                return false
            }
            if !full {
                let timedOut = windowEnd.wait(timeout: .now() + .microseconds(delay)) == .timedOut
                let signalled = pending.withLock { state -> Bool in
                    state.gathering = false
                    defer { state.woken = false }
                    return state.woken
                }
                // An append ended the window just as it ran out: its signal is on its way; take it, so that the
                // next window does not end at once.
                if timedOut && signalled { windowEnd.wait() }
            }
        }
        queue.async { self.commitNext() }
    }

    /// Commits everything waiting and returns how many appends shared the commit; nil when nothing was waiting
    /// (the writer is then idle, and the next append starts a commit at once).
    func commitBatch() -> Int? {
        let batch = pending.withLock { state -> ([JournalRecord], [Waiting], JournalError?)? in
            if state.completions.isEmpty {
                state.scheduled = false
                return nil
            }
            let batch = (state.records, state.completions, state.failure)
            // The next batch starts with room for half as many again as this one: one allocation per array and
            // commit, not one per doubling (with room for exactly as many, a batch a record larger than the last
            // grew its array once more: 0.08 µs a post, session 24).
            state.records = []
            state.records.reserveCapacity(batch.0.count + batch.0.count / 2 + 8)
            state.completions = []
            state.completions.reserveCapacity(batch.1.count + batch.1.count / 2 + 8)
            return batch
        }
        guard let (records, completions, failure) = batch else { return nil }
        if let failure {
            // Sticky: nothing after a failed commit is written until a test write succeeded.
            let refused = Result<Void, JournalError>.failure(Self.unavailable(failure))
            for waiting in completions { waiting.completion(refused) }
            return completions.count
        }
        let start = DispatchTime.now().uptimeNanoseconds
        let result =
            store?.commit(records) ?? .failure(JournalError(.closed, "the journal is closed"))
        switch result {
        case .success:
            metrics.commitDuration.recordNanoseconds(Int64(DispatchTime.now().uptimeNanoseconds - start))
            metrics.committed.increment()
            metrics.records.increment(by: records.count)
            metrics.batchRecords.record(records.count)
            metrics.batchAppends.record(completions.count)
            // A commit that wrote nothing (only durability barriers) leaves the WAL alone: SQLite syncs nothing.
            if configuration.fsync == .perCommit && !records.isEmpty { metrics.fsyncs.increment() }
        case .failure(let error):
            metrics.failed.increment()
            logger.error("journal: commit failed", metadata: ["error": "\(error)", "records": "\(records.count)"])
        }
        let handler = result.failure.flatMap { error in
            pending.withLock { state in
                state.failure = error
                return state.healthHandler
            }
        }
        for index in completions.indices {
            completions[index].completion(result)
        }
        if let error = result.failure, store != nil {
            becameUnhealthy(error, handler: handler)
        } else {
            catchUpIfBehind()
        }
        return completions.count
    }

    /// Queues a background tick behind the next commit when the index lags the log by more than `catchUpSteps`
    /// steps and the last step found most of its rows covered. The timer's ticks take in `timelineRows` rows each, a
    /// fixed rate (20,000 rows a second as shipped); posts can be written faster than that for as long as the load
    /// lasts, and the log would grow with them, its covered events kept until the load dropped. While it lags, a tick
    /// runs after each commit (the commits in between are still one group commit each), until the lag is back under
    /// the bound: compaction then keeps pace with the writes, each tick no longer than the timer's. A step that found
    /// its rows mostly not covered yet has reached the part of the log this load has not covered: catching up there
    /// would index events only for their sessions' next snapshots to delete them through the index, so it waits for
    /// the timer's next step to find the rows covered.
    private func catchUpIfBehind() {
        guard let store, configuration.compactionIntervalMilliseconds > 0, configuration.timelineRows > 0,
            configuration.catchUpSteps > 0, !catchUpQueued, store.lastStepMostlyCovered,
            store.unindexedRows > Int64(configuration.timelineRows) * Int64(configuration.catchUpSteps)
        else { return }
        catchUpQueued = true
        queue.async {
            self.catchUpQueued = false
            self.compactOnQueue(catchingUp: true)
        }
    }

    private var isFailing: Bool { pending.withLock { $0.failure != nil } }

    private func compactOnQueue(catchingUp: Bool = false) {
        dispatchPrecondition(condition: .onQueue(queue))
        guard let store, !isFailing else { return }
        let indexing = configuration.timelineRows > 0
        guard !indexing || store.tickMayFindWork() else { return }
        // A tick's transaction is committed without a sync of its own: what it writes (events deleted that recovery
        // does not need, the index and its mark) may be lost in a crash and done again, and its WAL frames are
        // synced with the next group commit's, which syncs the whole WAL (a crash before then loses the tick as a
        // whole: the WAL's checksums end the log at the last whole transaction). Under full load ticks run as often
        // as commits (`catchUpIfBehind`); each with its own `fdatasync` cost a tenth of the posts a second.
        store.relaxSync()
        defer { try? store.restoreSync() }
        do throws(JournalError) {
            try store.beginTransaction()
            var deleted = 0
            var indexed = false
            if indexing {
                // The rows the index takes in are compacted as it takes them in, so the cursor below only has to
                // come back over indexed rows, for the events a newer snapshot has covered since.
                let step = try store.indexTimeline(rows: Int64(configuration.timelineRows), compactingFirst: true)
                deleted += step.deleted
                indexed = step.covered > 0
                // A catch-up tick is there for the log's tail; the sweep over indexed rows (the events of removed
                // sessions and earlier incarnations: a snapshot deletes the indexed events it covers itself) is the
                // timer's, which would otherwise run it as often as commits, over the kept history, for nothing.
                if !catchingUp {
                    deleted += try store.compactStep(
                        rows: Int64(configuration.compactionRows),
                        through: store.timelineThrough
                    )
                }
            } else {
                deleted += try store.compactStep(rows: Int64(configuration.compactionRows))
            }
            try store.commitTransaction()
            store.statistics.compactedEvents += deleted
            store.tickEnded(caughtUp: !indexed)
            if catchingUp { store.statistics.catchUpTicks += 1 }
            metrics.backgroundCompactions.increment()
            // Sampled by the timer's ticks (8 a second as shipped), not after every commit, nor by the catch-up
            // ticks that follow every commit under load: two stats each.
            if !catchingUp { metrics.bytes.record(store.fileBytes()) }
            catchUpIfBehind()
        } catch {
            try? store.connection.execute("ROLLBACK")
            store.reloadTimelineThrough()
            store.tickEnded(caughtUp: false)
            logger.error("journal: compaction failed", metadata: ["error": "\(error)"])
        }
    }

    private func syncOnQueue() {
        dispatchPrecondition(condition: .onQueue(queue))
        guard !isFailing else { return }
        do {
            let before = store?.statistics.syncs ?? 0
            try store?.sync()
            if (store?.statistics.syncs ?? 0) > before { metrics.fsyncs.increment() }
        } catch {
            logger.error("journal: sync failed", metadata: ["error": "\(error)"])
        }
    }
}
