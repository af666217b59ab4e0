import Foundation
public import Logging
public import Metrics
public import SessionJournal
import Synchronization

/// The service's use of a `Journal`: what each session journals, the durability wait of a POST, and the
/// sessions that could not be restored.
///
/// Concurrency: thread-safe. Appends go to the journal's own writer queue (group commit); the broken sessions
/// are under a `Mutex`, and counted by the `feedbackhost_sessions_broken` gauge.
public final class SessionPersistence: Sendable {
    /// The journal.
    public let journal: Journal
    /// A session journals a snapshot of its state every this many revisions, so recovery replays fewer events.
    public let snapshotInterval: UInt64
    let logger: Logger
    private let broken = Mutex<[SessionID: String]>([:])
    private let brokenGauge: Meter

    /// Wraps an open journal; the number of sessions that could not be restored goes to `metricsFactory`.
    public init(
        journal: Journal,
        snapshotInterval: Int,
        logger: Logger,
        metricsFactory: any MetricsFactory = MetricsSystem.factory
    ) {
        self.journal = journal
        brokenGauge = Meter(label: "feedbackhost_sessions_broken", dimensions: [], factory: metricsFactory)
        brokenGauge.set(0)
        self.snapshotInterval = UInt64(max(snapshotInterval, 1))
        self.logger = logger
    }

    /// Queues records for the next group commit; a failed commit is logged by the journal, and the POSTs that
    /// wait in `durable()` see it.
    func record(_ records: [JournalRecord]) {
        journal.append(records, completion: Self.ignore)
    }

    private static let ignore: Journal.Completion = { _ in }

    /// Returns once everything recorded before the call is durable under the fsync policy.
    func durable() async throws(APIError) {
        do {
            try await journal.append([])
        } catch {
            throw Self.notDurable(error)
        }
    }

    /// Calls `completion` once everything recorded before the call is durable under the fsync policy (nil), or
    /// with the problem when the commit failed; on the journal's writer queue.
    func durable(_ completion: @escaping @Sendable (APIError?) -> Void) {
        journal.append([]) { result in
            switch result {
            case .success: completion(nil)
            case .failure(let error): completion(Self.notDurable(error))
            }
        }
    }

    private static func notDurable(_ error: JournalError) -> APIError {
        APIError(
            .journalUnavailable,
            "the event was applied but could not be made durable (\(error.message)); it may be lost on a restart",
            retryAfter: 1
        )
    }

    /// Journals that a session was deleted or expired.
    func removed(_ id: SessionID) {
        record([.removed(sessionID: id.description)])
    }

    /// Remembers a session that could not be restored; its records stay in the journal until it is deleted.
    func markBroken(_ id: SessionID, reason: String) {
        logger.error("session could not be restored", metadata: ["session.id": "\(id)", "reason": "\(reason)"])
        if broken.withLock({ $0.updateValue(reason, forKey: id) }) == nil { brokenGauge.increment() }
    }

    /// The problem a request for a session that could not be restored gets, nil for any other id.
    func brokenProblem(_ id: SessionID) -> APIError? {
        guard let reason = broken.withLock({ $0[id] }) else { return nil }
        return APIError(
            .sessionBroken,
            "session \(id) could not be restored from the journal: \(reason). "
                + "Its records are kept; DELETE it to discard them"
        )
    }

    /// Forgets a broken session and deletes its records; false when the id is not a broken session.
    func discardBroken(_ id: SessionID) -> Bool {
        guard broken.withLock({ $0.removeValue(forKey: id) }) != nil else { return false }
        brokenGauge.decrement()
        removed(id)
        return true
    }

    /// The number of sessions that could not be restored.
    public var brokenCount: Int { broken.withLock { $0.count } }
}
