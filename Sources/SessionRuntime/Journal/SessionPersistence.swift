import Dispatch
import Foundation
public import Logging
public import Metrics
public import SessionJournal
import Synchronization

/// The service's use of a `Journal`: what each session journals, the journal's health as the API sees it, the
/// sessions fenced by a failed write, and the sessions that could not be restored.
///
/// A session is fenced when one of its appends fails (its `SessionRecorder` says so): its in-memory state is
/// ahead of what the journal holds, so every request for it is answered 503 until the journal is healthy again
/// and the service re-anchored it from the journal (`SessionService.reanchorFencedSessions`).
///
/// Concurrency: thread-safe. Appends go to the journal's own writer queue (group commit); the fenced and broken
/// sessions are under `Mutex`es, with an atomic count of the fenced for the request path, and the journal's health
/// is mirrored in an atomic. The broken sessions are counted by the `feedbackhost_sessions_broken` gauge, the
/// fenced ones by `feedbackhost_sessions_fenced`.
public final class SessionPersistence: Sendable {
    /// The journal (SQLite on this machine, or PostgreSQL shared by replicas).
    public let journal: any SessionJournaling
    /// A session journals a snapshot of its state every this many revisions, so recovery replays fewer events.
    public let snapshotInterval: UInt64
    /// Whether each journaled event carries the checksum of the state it produced (`journal.state.checksums`): what
    /// lets `verify` and a fixture's replay name the first revision that differs. It costs one encoding of the state
    /// per event.
    public let stateChecksums: Bool
    package let logger: Logger
    private let broken = Mutex<[SessionID: APIError]>([:])
    private let brokenGauge: Meter
    private let fenced = Mutex<[SessionID: JournalError]>([:])
    private let fencedCount = Atomic<Int>(0)
    private let fencedGauge: Meter
    /// How late each durable timer fired: from its deadline to the step that replaced it
    /// (`feedbackhost_timer_lateness_seconds`), whether the session was in memory or woken for it.
    @usableFromInline
    let timerLateness: Timer
    /// The journal's health as the journal last reported it. An object of its own, which the journal's handler
    /// holds: a weak reference to the persistence would give it a side table, and every retain and release of it on
    /// the post's way the slow path.
    private let health = HealthMirror()
    private let superseded = Mutex<(@Sendable (SessionID) -> Void)?>(nil)
    private let reanchoring = Atomic<Bool>(false)
    /// Where each thread notes which session's code it runs, in the data directory; `.disabled` without one.
    package let marks: CrashMarks

    /// Wraps an open journal; the number of sessions that could not be restored goes to `metricsFactory`.
    public init(
        journal: any SessionJournaling,
        snapshotInterval: Int,
        logger: Logger,
        metricsFactory: any MetricsFactory = MetricsSystem.factory,
        stateChecksums: Bool = true,
        marks: CrashMarks = .disabled
    ) {
        self.marks = marks
        self.stateChecksums = stateChecksums
        self.journal = journal
        brokenGauge = Meter(label: "feedbackhost_sessions_broken", dimensions: [], factory: metricsFactory)
        brokenGauge.set(0)
        fencedGauge = Meter(label: "feedbackhost_sessions_fenced", dimensions: [], factory: metricsFactory)
        fencedGauge.set(0)
        timerLateness = Timer(label: "feedbackhost_timer_lateness_seconds", dimensions: [], factory: metricsFactory)
        self.snapshotInterval = UInt64(max(snapshotInterval, 1))
        self.logger = logger
        journal.onHealthChange { [health] in health.changed($0) }
    }

    /// Called on a global queue each time the journal becomes healthy again (never on its writer queue, so it may
    /// read the journal). One handler; a later call replaces it.
    package func onHealed(_ handler: @escaping @Sendable () -> Void) {
        health.healed.withLock { $0 = handler }
    }

    /// The journal's health, mirrored for the request path.
    private final class HealthMirror: Sendable {
        /// The error of the journal's failed commit while it cannot commit, nil while it can.
        let failure = Mutex<JournalError?>(nil)
        let failing = Atomic<Bool>(false)
        let healed = Mutex<(@Sendable () -> Void)?>(nil)

        func changed(_ health: JournalHealth) {
            switch health {
            case .failing(let error):
                failure.withLock { $0 = error }
                failing.store(true, ordering: .releasing)
            case .healthy:
                failing.store(false, ordering: .releasing)
                failure.withLock { $0 = nil }
                if let handler = healed.withLock({ $0 }) { DispatchQueue.global().async(execute: handler) }
            }
        }
    }

    /// The refusal of a write (a new session, posted events) while the journal cannot commit; nil while it can.
    /// Nothing is applied before the refusal, so the sessions and their reads stay as they are.
    package func writeRefusal() -> APIError? {
        guard health.failing.load(ordering: .acquiring), let error = health.failure.withLock({ $0 }) else {
            return nil
        }
        return Self.notWritten(
            error,
            what: "the server cannot write its journal, so it takes no new sessions or events"
        )
    }

    /// The answer to a write whose records the journal could not write.
    static func notJournaled(_ error: JournalError) -> APIError {
        if error.code == .fenced {
            return APIError(
                .journalUnavailable,
                "another replica took this session over while this request was applied, so nothing of it was kept "
                    + "(\(error.message)): retry it (with the same Idempotency-Key), and it is applied where the "
                    + "session lives now",
                retryAfter: 1
            )
        }
        return notWritten(
            error,
            what: "the journal could not write this request's records, so it was not applied: the session is "
                + "re-read from the journal once writes work again (a retry with the same Idempotency-Key is applied "
                + "then as a new request)"
        )
    }

    /// The answer to a request whose passive session could not be read back from the journal.
    package static func notRead(_ error: JournalError) -> APIError {
        APIError(
            .journalUnavailable,
            "the session could not be read back from the journal (\(error.message)); retry in a moment",
            retryAfter: 1
        )
    }

    /// A 507 for a full disk (an operator frees space), a 503 otherwise; both with `Retry-After`.
    private static func notWritten(_ error: JournalError, what: String) -> APIError {
        if error.code == .full {
            return APIError(
                .storageFull,
                "\(what): the disk holding the data directory is full. An operator must free space on that volume; "
                    + "the server resumes by itself, reads work meanwhile",
                retryAfter: 5
            )
        }
        return APIError(
            .journalUnavailable,
            "\(what) (\(error.message)); the server retries by itself, reads work meanwhile",
            retryAfter: 1
        )
    }

    /// Called on a global queue with a session whose append a shared journal refused because another replica owns it
    /// now (`JournalError.Code.fenced`): the service drops its copy. One handler; a later call replaces it.
    package func onSuperseded(_ handler: @escaping @Sendable (SessionID) -> Void) {
        superseded.withLock { $0 = handler }
    }

    /// Fences a session whose append failed with `error`; its requests are answered 503 until it is re-anchored. A
    /// session another replica owns now (`.fenced`) is not re-anchored (that would take it back) but dropped.
    func fence(_ id: SessionID, _ error: JournalError) {
        if error.code == .fenced {
            logger.info(
                "session superseded: another replica owns it now; this copy is dropped",
                metadata: ["session.id": "\(id)"]
            )
            // Fenced until dropped, so that no request reads what this copy applied and could not journal.
            if fenced.withLock({ $0.updateValue(error, forKey: id) == nil }) {
                fencedCount.add(1, ordering: .releasing)
            }
            if let handler = superseded.withLock({ $0 }) { DispatchQueue.global().async { handler(id) } }
            return
        }
        let added = fenced.withLock { $0.updateValue(error, forKey: id) == nil }
        guard added else { return }
        fencedCount.add(1, ordering: .releasing)
        fencedGauge.increment()
        logger.warning(
            "session fenced: its journal write failed; it is re-read from the journal once writes work",
            metadata: ["session.id": "\(id)", "error": "\(error.message)"]
        )
    }

    /// Whether session `id`'s copy here was fenced because another replica owns the session now.
    package func isSuperseded(_ id: SessionID) -> Bool {
        guard fencedCount.load(ordering: .acquiring) > 0 else { return false }
        return fenced.withLock { $0[id]?.code == .fenced }
    }

    /// Lifts the fence of a session re-anchored from the journal, or dropped after another replica took it over.
    package func unfence(_ id: SessionID) {
        guard let error = fenced.withLock({ $0.removeValue(forKey: id) }) else { return }
        fencedCount.subtract(1, ordering: .releasing)
        if error.code != .fenced { fencedGauge.decrement() }
    }

    /// Runs `body` unless another call is running it: one re-anchoring pass at a time.
    package func reanchorOnce(_ body: () -> Void) {
        guard reanchoring.compareExchange(expected: false, desired: true, ordering: .acquiring).exchanged else {
            return
        }
        defer { reanchoring.store(false, ordering: .releasing) }
        body()
    }

    /// The sessions fenced now by a failed write (not those another replica took over: they are dropped, not
    /// re-anchored).
    package var fencedSessions: [SessionID] { fenced.withLock { $0.filter { $0.value.code != .fenced }.map(\.key) } }

    /// What a request for a session another replica took over is answered (its copy here fenced or stopped): 503,
    /// to be retried where the session lives now.
    @usableFromInline
    package static func movedProblem(_ id: SessionID) -> APIError {
        APIError(
            .journalUnavailable,
            "session \(id) moved to another replica; retry, and the request is served where it lives now",
            retryAfter: 1
        )
    }

    /// The problem every request for a fenced session gets, nil for any other.
    package func fenceProblem(_ id: SessionID) -> APIError? {
        guard fencedCount.load(ordering: .acquiring) > 0, let error = fenced.withLock({ $0[id] }) else { return nil }
        if error.code == .fenced { return Self.movedProblem(id) }
        return APIError(
            .journalUnavailable,
            "session \(id) is not served until it is re-read from the journal, after a write of it failed "
                + "(\(error.message)); what the journal did not keep is dropped. Retry after a moment",
            retryAfter: 1
        )
    }

    /// Journals that a session was deleted or expired.
    package func removed(_ id: SessionID) {
        journal.append([.removed(sessionID: id.description)]) { _ in }
    }

    /// Remembers a session that could not be restored; its records stay in the journal until it is deleted.
    package func markBroken(_ id: SessionID, reason: String) {
        markBroken(
            id,
            problem: APIError(
                .sessionBroken,
                "session \(id) could not be restored from the journal: \(reason). "
                    + "Its records are kept; DELETE it to discard them"
            )
        )
    }

    /// Remembers a session that could not be restored, with the problem its requests get.
    package func markBroken(_ id: SessionID, problem: APIError) {
        logger.error(
            "session could not be restored",
            metadata: ["session.id": "\(id)", "reason": "\(problem.message)"]
        )
        if broken.withLock({ $0.updateValue(problem, forKey: id) }) == nil { brokenGauge.increment() }
    }

    /// The problem a request for a session that could not be restored gets, nil for any other id.
    package func brokenProblem(_ id: SessionID) -> APIError? {
        broken.withLock { $0[id] }
    }

    /// Forgets a broken session and deletes its records; false when the id is not a broken session.
    package func discardBroken(_ id: SessionID) -> Bool {
        guard forgetBroken(id) else { return false }
        removed(id)
        return true
    }

    /// Forgets that `id` could not be restored (the journal no longer holds it); false when it was not marked.
    package func forgetBroken(_ id: SessionID) -> Bool {
        guard broken.withLock({ $0.removeValue(forKey: id) }) != nil else { return false }
        brokenGauge.decrement()
        return true
    }

    /// The sessions that could not be restored.
    package var brokenIDs: [SessionID] { broken.withLock { Array($0.keys) } }

    /// The number of sessions that could not be restored.
    public var brokenCount: Int { broken.withLock { $0.count } }
}
