/// What the service needs from a journal of sessions, whatever holds it: `Journal` (SQLite in the data directory, one
/// machine) or `PostgresJournal` (module SessionJournalPostgres: one PostgreSQL database shared by every replica).
///
/// The promises every implementation keeps:
/// - An append completes only after its records are committed (durable under the journal's policy), or with the
///   error that kept them out; the records of one append are committed together or not at all; completions run in
///   the order of their appends. Appends that wait while a commit is in flight share the next one (group commit).
/// - A failed commit is sticky: `health` is `.failing` and every append fails until a test write succeeds.
/// - Each record carries a checksum; reading a session back keeps its records up to the first damaged or missing one
///   and says so in `RecoveredSession.damage`.
/// - A keyed answer (`JournalRecord.answered`) appended with its request's events is read back with its session;
///   the newest `JournalConfiguration.answersPerSession` of each session are kept.
/// - The deadline index (`JournalRecord.deadline`) answers `deadlines(through:limit:)` and `deadlines(after:limit:)`.
/// - `compact()` deletes what no reading back needs.
///
/// Ownership (fencing), where the journal is shared: reading a session back (`recover(only:)`, `recover()`) or
/// creating it (`JournalRecord.created`) makes this journal its owner; an append for a session this journal does not
/// own (another took it since) fails with `JournalError.Code.fenced` and writes nothing, while the appends it shared a
/// commit with are written. A journal on one machine owns every session and never answers `.fenced`.
///
/// Concurrency: every method may be called from any thread, except from inside a completion or health handler (they
/// run on the journal's own queue; a read from there would wait for itself).
///
/// Histories (`SessionHistoryReading`, for `feedback-host verify` and the export route) are read without taking
/// ownership.
public protocol SessionJournaling: AnyObject, Sendable, SessionHistoryReading {
    /// A random 16-byte key made once with the journal and kept in it: key the fingerprints of idempotent requests
    /// with it, so that they compare equal across restarts (and replicas) and a client cannot predict them.
    var fingerprintKey: [UInt8] { get }

    /// Queues `records` for the next group commit; `completion` runs once they are committed, or with the error that
    /// kept them out. Completions run in the order of their appends, on the journal's queue: keep them short.
    func append(_ records: [JournalRecord], completion: @escaping @Sendable (Result<Void, JournalError>) -> Void)

    /// What opening found, without reading any session back: how many sessions the journal holds. Run it once after
    /// opening.
    func start() throws(JournalError) -> JournalRecovery.Summary

    /// Reads every live session back (and owns them all). Tests and tools use it; the server activates sessions one
    /// at a time (`recover(only:)`).
    func recover() throws(JournalError) -> JournalRecovery

    /// Reads the live sessions among `ids` back and owns them: what a passive session is activated from. Appends made
    /// before the call are committed first.
    func recover(only ids: Set<String>) throws(JournalError) -> [RecoveredSession]

    /// Whether the journal can commit: `.failing` from a failed commit until a test write succeeds.
    var health: JournalHealth { get }

    /// Calls `handler` on the journal's queue at each change of `health`, after the completions of the commit that
    /// failed. One handler; a later call replaces it.
    func onHealthChange(_ handler: @escaping @Sendable (JournalHealth) -> Void)

    /// The sessions whose deadline is at or before `time` (milliseconds since 1970), earliest first, at most `limit`:
    /// the passive ones to wake (a shared journal leaves out the sessions a replica holds in memory).
    func deadlines(through time: Int64, limit: Int) throws(JournalError) -> [JournalDeadline]

    /// The deadlines after `time` (milliseconds since 1970), earliest first, at most `limit`; among the same sessions
    /// as `deadlines(through:limit:)` (a shared journal leaves out the ones a live replica holds).
    func deadlines(after time: Int64, limit: Int) throws(JournalError) -> [JournalDeadline]

    /// How many sessions have a pending deadline.
    func deadlineCount() throws(JournalError) -> Int

    /// Deletes what no reading back needs (events covered by snapshots, records of removed sessions, keyed answers
    /// beyond the newest of each session).
    func compact() throws(JournalError) -> CompactionReport

    // Retention (`session.retention`): each session's last-activity time (when it last left memory, in
    // milliseconds since 1970), and the deletion of the passive sessions whose time is older than an age.

    /// Gives every session without a last-activity time one at `time` (a crash left it unsettled, or an older
    /// version wrote it); returns how many got one.
    func stampActivity(at time: Int64) throws(JournalError) -> Int

    /// The passive sessions (held in memory by no replica) that last left memory before `time` and have no
    /// deadline pending, oldest first, at most `limit`.
    func abandonedSessions(before time: Int64, limit: Int) throws(JournalError) -> [String]

    /// Sets the last-activity time of `ids` (active again) to `time`.
    func touchActivity(of ids: [String], at time: Int64) throws(JournalError)

    /// Deletes, as a removal would, those of `ids` that are still passive, left memory before `time` and have no
    /// deadline pending (checked in the transaction that deletes them); returns the ids deleted.
    func retire(_ ids: [String], leftBefore time: Int64) throws(JournalError) -> [String]

    /// Calls `completion` with whether this journal still owns session `id` (no other replica took it since this
    /// one read it back or made it): what a copy in memory must confirm before it answers a read, since only its
    /// writes meet the fence. Never blocks: a shared journal answers after one query, which it sends together with
    /// the other confirmations waiting (on its queue: the completion must not wait for the journal); a journal on
    /// one machine owns every session and answers true at once, on the caller's thread.
    func confirmOwnership(of id: String, completion: @escaping @Sendable (Result<Bool, JournalError>) -> Void)

    /// Whether other replicas may take this journal's sessions over (one database shared by replicas). Then a copy
    /// in memory can be superseded without knowing it until its next write is refused, so the service shows a
    /// stream only states the journal holds.
    var sharesSessions: Bool { get }

    /// Raises the token generation (`JournalRecord.tokens`) of each session of `generations` that the journal holds to
    /// at least the one given, whoever owns it: the adoption of the revocations an earlier version kept in a file of
    /// its own. A shared journal also lets go of each session it raised, so that a replica holding it in memory reads
    /// it back (its writes are fenced, its reads confirm ownership). Returns the ids raised.
    func adoptTokenGenerations(_ generations: [String: UInt64]) throws(JournalError) -> [String]

    // Quarantine (issue 31): sessions the process died inside of, kept until an admin releases them. Written and read
    // in turn with the appends (after those queued before), committed when the call returns, whoever owns the session.
    // A removal of the session, or a creation record of its id (a new incarnation), deletes its quarantine.

    /// Quarantines session `id` with `reason` (a sentence) at `time` (milliseconds since 1970), replacing an earlier
    /// quarantine of it; the record names this machine's host as its `replica`. A shared journal also lets go of the
    /// session, whoever owns it, so that a replica holding it in memory is fenced at its next write and reads it back.
    func quarantine(_ id: String, reason: String, at time: Int64) throws(JournalError)

    /// Ends session `id`'s quarantine; returns whether it was quarantined.
    func releaseQuarantine(_ id: String) throws(JournalError) -> Bool

    /// Session `id`'s quarantine, nil when it is not quarantined.
    func quarantine(of id: String) throws(JournalError) -> Quarantine?

    /// The quarantined sessions, oldest quarantine first, at most `limit`.
    func quarantined(limit: Int) throws(JournalError) -> [Quarantine]

    /// Counters of the journal's work so far.
    var statistics: JournalStatistics { get }

    /// Commits what is waiting and closes the journal; later appends fail with `.closed`. Blocks until done.
    func close()

    /// What to call when every writer has run out of work for now (the HTTP server's shards are all about to wait):
    /// a commit waiting for more appends to join it can start at once, since none can arrive before a client sends
    /// one. Nil when the journal never waits for appends to join a commit: the server then does not watch for idleness.
    var whenWritersIdle: (@Sendable () -> Void)? { get }
}

extension SessionJournaling {
    /// The earliest deadline after `time` (milliseconds since 1970), nil when there is none (`deadlines(after:limit:)`).
    public func deadline(after time: Int64) throws(JournalError) -> Int64? {
        try deadlines(after: time, limit: 1).first?.at
    }

    /// Appends `records` and returns once they are committed.
    public func append(_ records: [JournalRecord]) async throws(JournalError) {
        let result = await withCheckedContinuation { continuation in
            append(records) { continuation.resume(returning: $0) }
        }
        try result.get()
    }
}

extension Journal: SessionJournaling {
    /// One machine, one journal: every session is its own.
    public func confirmOwnership(
        of id: String,
        completion: @escaping @Sendable (Result<Bool, JournalError>) -> Void
    ) {
        completion(.success(true))
    }

    /// One machine's journal: no other replica takes its sessions.
    public var sharesSessions: Bool { false }
}
