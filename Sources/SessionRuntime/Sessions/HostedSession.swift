package import FeedbackJSON
public import FeedbackLoop

/// One running session, whatever its system: what the API handlers talk to.
///
/// Implementations are thread-safe: the loop underneath has its own lock, and handlers on any shard queue may
/// call at once.
public protocol HostedSession: AnyObject, Sendable {
    /// The session's id.
    var id: SessionID { get }
    /// The name of the session's system.
    var systemName: String { get }
    /// The hash of the system's name and schema version (`FeedbackSystem.schemaHash`), carried by snapshots.
    var schemaHash: String { get }
    /// The current state, encoded.
    func snapshot() -> SessionSnapshot
    /// Applies client events, all or none: each is checked against the system before any is sent to the
    /// reducer. `completion` gets the snapshot right after the last was reduced, on the thread that reduced it
    /// (often the caller's, before this returns). With `ifMatch` (an `If-Match` header value) the events are
    /// sent only if the session is at a cursor it names, checked and queued in one step under the loop's lock.
    /// With `claim` (a request's `Idempotency-Key`), a journaled session journals the answer with the events, in
    /// the same group commit.
    func post(
        _ events: PostedEvents,
        ifMatch: String?,
        claim: IdempotencyClaim?,
        completion: @escaping @Sendable (Result<SessionSnapshot, APIError>) -> Void
    )
    /// Applies a client's numbered post (issue 34) and answers at the reduce; the answer's record (`.sequenced`) is
    /// journaled with the events. The caller decided with `withClientLedger` that the number is the next one.
    func postSequenced(
        _ events: PostedEvents,
        ifMatch: String?,
        stamp: ClientStamp,
        completion: @escaping @Sendable (Result<SessionSnapshot, APIError>) -> Void
    )

    /// Journals a permanent refusal of the numbered post `stamp`: the number is used up.
    func journalRefusal(_ stamp: ClientStamp, _ refusal: APIError)

    /// Decides what the numbered post `stamp` does (`ClientLedger.begin`), and journals the clients the ledger forgot
    /// to make room for a new one, under the ledger's lock (so a forgotten client's next post is journaled after).
    func beginSequenced(_ stamp: ClientStamp, remembering capacity: Int) -> ClientLedger.Decision

    /// Runs `body` on the session's client ledger under its lock.
    func withClientLedger<T>(_ body: (inout ClientLedger) -> T) -> T

    /// Calls `notify` once everything the session journaled so far is durable (nil; at once without a journal), or
    /// with the problem to answer when the journal could not write some of it: the wait of every write's answer.
    func whenJournaled(_ notify: @escaping @Sendable (APIError?) -> Void)
    /// The answers to this session's `Idempotency-Key` requests, under the session's own lock.
    func withIdempotencyLedger<T>(_ body: (inout IdempotencyLedger<SessionSnapshot>) -> T) -> T
    /// When a client last used the session, in `DispatchTime` uptime nanoseconds.
    var lastActive: UInt64 { get }
    /// Counts now as a use of the session: a stream's last subscriber leaving does, so the idle time of a session
    /// that was watched starts when nobody watches it any more.
    func touch()
    /// The current state, when nothing can undo it: with a journal only once the records of its step are journaled
    /// (nil until then, and for good when the journal refused them); without one `snapshot()`. What a stream may
    /// start from.
    func journaledSnapshot() -> SessionSnapshot?
    /// Calls `body` with the current state, then with each new one, in order: with a journal once each is journaled
    /// (on the journal's thread; never for a state whose records the journal refused), without one on the thread
    /// that reduced it. Keep it short; the encoding is the one `snapshot()` caches. Ends when the returned
    /// observation is cancelled or the loop stops.
    func observeSnapshots(_ body: @escaping @Sendable (SessionSnapshot) -> Void) -> Observation
    /// The generation the tokens the server mints for this session carry (`TokenGeneration`): 0 until a revocation,
    /// read back from the journal with the session.
    var tokenGeneration: UInt64 { get }
    /// Revokes every token minted for the session before: moves its token generation one on (this copy refuses the
    /// older tokens at once) and calls `completion` with the new generation once the journal holds it, or with the
    /// problem that kept it out (the move then holds in this copy only, which that failure fences or drops).
    func revokeTokens(completion: @escaping @Sendable (Result<UInt64, APIError>) -> Void)
    /// Stops the loop: effects are cancelled, later posts fail.
    func stop()
    /// Stops the loop of a copy another replica took over: as `stop`, but a post that was still being applied is
    /// answered 503 (the session moved: its retry is served where it lives now), not 404.
    func supersede()

    /// `post(_:ifMatch:claim:completion:)` answered once what the post journaled is durable (a write that failed is
    /// the answer then), and counted in `feedbackhost_events_total{outcome="applied"}`: the API's way of a post, with
    /// one closure on the journal's wait between the loop and `completion`.
    func postDurably(
        _ events: PostedEvents,
        ifMatch: String?,
        completion: @escaping @Sendable (Result<SessionSnapshot, APIError>) -> Void
    )

    /// The session's containment (its feedbacks' budget, slow reduces, crash marks); nil when none is kept.
    var containment: SessionGuard? { get }
    /// Starts the session's feedbacks again when a fork's pause or a runaway's stop holds them: what held them, nil
    /// when they ran. The end of a pause is journaled (the answer waits for it through `whenJournaled`).
    func resumeEffects() -> SessionGuard.Resumed?
    /// Takes the session out of memory, its state kept in the journal: nothing more of it is journaled (the next
    /// activation reads the journal, which holds every record appended before this call), its loop stops, and a
    /// request that was still being applied is answered 503 `session-passivated` (nothing of it kept) so that
    /// its retry activates the session.
    func passivate()
}

extension HostedSession {
    /// The one durability wait of an answer: calls `completion` with `result` once everything the session journaled
    /// so far is durable (at once without a journal), or with the journal's problem in its place. A failure is
    /// answered at once: it kept nothing that could wait.
    package func answerOnceJournaled<Value: Sendable>(
        _ result: Result<Value, APIError>,
        _ completion: @escaping @Sendable (Result<Value, APIError>) -> Void
    ) {
        guard case .success = result else { return completion(result) }
        whenJournaled { problem in completion(problem.map { .failure($0) } ?? result) }
    }

    /// Applies client events and waits for the snapshot after them; see ``post(_:ifMatch:claim:completion:)``.
    package func post(_ events: PostedEvents, ifMatch: String? = nil) async throws(APIError) -> SessionSnapshot {
        let result = await withCheckedContinuation { continuation in
            post(events, ifMatch: ifMatch, claim: nil) { continuation.resume(returning: $0) }
        }
        return try result.get()
    }

    /// Applies client events given as JSON values; see ``post(_:ifMatch:claim:completion:)``.
    package func post(_ events: [JSONValue], ifMatch: String? = nil) async throws(APIError) -> SessionSnapshot {
        try await post(PostedEvents(events), ifMatch: ifMatch)
    }
}
