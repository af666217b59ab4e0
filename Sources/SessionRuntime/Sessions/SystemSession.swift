public import CoreMetrics
public import Dispatch
import FeedbackJSON
public import FeedbackLoop
import Foundation
public import SessionJournal
public import Synchronization
public import SystemKit

/// A session of one concrete system: its loop and its encoded states.
///
/// The loop owns the state under its own lock; `snapshots` (`SessionSnapshots`) caches the JSON of each step's state,
/// so a state is encoded at most once however many readers ask (the recorder, the stream, a post's answer, `GET`).
/// With a journal, each post tells the recorder when its batch starts and ends, so the batch's events and its keyed
/// answer are journaled together.
///
/// Specialised where it matters: the session is reached through `any HostedSession`, whose witnesses run generic over
/// the system, so a post enters through `paths.post`, a closure `HostedSystem.init` made where the system is concrete,
/// and the post's way (`postNow`, the trial in `submitOnce`, `finish`, and the recorder's `record`) is `@inlinable`
/// so that it is compiled there for the system's own types. What that code touches is `@usableFromInline`; nothing
/// else changes for callers.
@usableFromInline
final class SystemSession<System: FeedbackSystem>: HostedSession {
    @usableFromInline
    let id: SessionID
    @usableFromInline
    let system: System
    @usableFromInline
    let epoch: UInt64
    @usableFromInline
    let loop: Loop<System.State, System.Event>
    /// What handles the system's own types, specialised for the system where `HostedSystem` made it.
    @usableFromInline
    let paths: SessionPaths<System>
    /// The session's encoded states, its clients' marks and its memory account's weighing of them, shared with its
    /// loop's observers.
    @usableFromInline
    let snapshots: SessionSnapshots
    /// What the session holds against the service's memory budget; nil when nothing is counted.
    @usableFromInline
    let account: SessionAccount?
    private let idempotency = Mutex(
        IdempotencyLedger<SessionSnapshot>(
            capacity: SessionLimits.idempotencyKeysPerSession,
            weigh: { $0.state.count }
        )
    )
    @usableFromInline
    let recorder: SessionRecorder<System>?
    @usableFromInline
    package let containment: SessionGuard?
    /// Times the admission trial's reduces, which are the batch's reduces when it is queued behind its state.
    @usableFromInline
    let reduceTimer: CoreMetrics.Timer?
    /// Counts the events of durable posts.
    @usableFromInline
    let eventsApplied: CoreMetrics.Counter?
    /// The generation the session's minted tokens must carry (`SystemSession+Tokens`).
    let tokens: TokenGeneration
    @usableFromInline
    let lastUse = Atomic<UInt64>(DispatchTime.now().uptimeNanoseconds)
    /// Set once by `passivate`, before the loop stops.
    @usableFromInline
    let passivated = Atomic<Bool>(false)
    /// Set when another replica took the session over (`supersede`): a post its stop catches is answered 503.
    @usableFromInline
    let superseded = Atomic<Bool>(false)
    /// Client events accepted but not yet reduced.
    @usableFromInline
    let inbox = Atomic<Int>(0)
    @usableFromInline
    let inboxCapacity: Int

    @usableFromInline
    var lastActive: UInt64 { lastUse.load(ordering: .relaxed) }

    /// Notes a use on the precise clock: the least recently used session leaves memory first, so sessions used within
    /// one tick of a coarse clock must not tie (`CLOCK_MONOTONIC_COARSE` here made an LRU test pick the wrong ones).
    @inlinable
    func touch() {
        lastUse.store(DispatchTime.now().uptimeNanoseconds, ordering: .relaxed)
    }

    @usableFromInline
    var systemName: String { system.name }

    @usableFromInline
    var schemaHash: String { system.schemaHash }

    init(
        id: SessionID,
        system: System,
        paths: SessionPaths<System>,
        epoch: UInt64,
        state: System.State,
        revision: UInt64 = 0,
        inboxCapacity: Int,
        environment: SessionEnvironment,
        recorder: SessionRecorder<System>? = nil,
        account: SessionAccount? = nil,
        encodedState: [UInt8]? = nil,
        tokenGeneration: UInt64 = 0,
        clients: [ClientSequence] = []
    ) {
        var ledger = ClientLedger()
        if !clients.isEmpty { ledger.restore(clients, revision: revision) }
        tokens = TokenGeneration(tokenGeneration)
        self.inboxCapacity = inboxCapacity
        self.id = id
        self.system = system
        self.paths = paths
        self.epoch = epoch
        self.account = account
        // The starting state's encoding, when the caller made one, is the first cached snapshot.
        let marks = ledger.marks(at: revision)
        snapshots = SessionSnapshots(
            epoch: epoch,
            latest: encodedState.map {
                SessionSnapshot(cursor: Cursor(epoch: epoch, rev: revision), state: $0, clients: marks)
            },
            ledger: ledger,
            account: account,
            logger: environment.system.logger
        )
        // The feedbacks see the starting state inside `makeLoop`: a trap there is the activation's.
        let crashMarks = environment.containment?.marks ?? .disabled
        crashMarks.enter(session: id.description, kind: .activation, detail: "revision \(revision)")
        let loop = environment.makeLoop(of: system, from: state, revision: revision)
        crashMarks.leave()
        self.loop = loop
        containment = environment.containment
        reduceTimer = environment.reduceTimer
        eventsApplied = environment.eventsApplied
        containment?.bind(
            SessionGuard.Controls(
                name: { [weak loop] index in loop?.feedbackName(at: index) ?? "feedback \(index + 1)" },
                offload: { [weak loop] lane in loop?.offload(to: lane) },
                resume: { [weak loop] in loop?.resumeFeedbacks() }
            )
        )
        self.recorder = recorder
        if let recorder { paths.attach(recorder, self) }
    }

    @usableFromInline
    func snapshot() -> SessionSnapshot {
        touch()
        let step = loop.currentStep
        return snapshot(of: step.state, rev: step.revision)
    }

    /// The snapshot of `state` at `rev` (`SessionSnapshots.snapshot(at:encoding:)`): cached, or encoded and cached.
    @inlinable
    func snapshot(of state: System.State, rev: UInt64) -> SessionSnapshot {
        snapshots.snapshot(at: rev) { Self.encode(state) }
    }

    /// Caches `snapshot` unless a later revision is cached (`SessionSnapshots.cache(_:weight:)`).
    @inlinable
    func cache(_ snapshot: SessionSnapshot, weight: SessionBudget.Weight? = nil) -> SessionSnapshot {
        snapshots.cache(snapshot, weight: weight)
    }

    @inlinable
    static func encode(_ state: System.State) -> [UInt8] {
        System.encodeState(state)
    }

    @usableFromInline
    func post(
        _ events: PostedEvents,
        ifMatch: String?,
        claim: IdempotencyClaim?,
        completion: @escaping @Sendable (Result<SessionSnapshot, APIError>) -> Void
    ) {
        route(
            events,
            ifMatch: ifMatch,
            PostAnswer(claim: claim, durable: false, count: events.count, completion: completion)
        )
    }

    @usableFromInline
    func postDurably(
        _ events: PostedEvents,
        ifMatch: String?,
        completion: @escaping @Sendable (Result<SessionSnapshot, APIError>) -> Void
    ) {
        route(
            events,
            ifMatch: ifMatch,
            PostAnswer(claim: nil, durable: true, count: events.count, completion: completion)
        )
    }

    @usableFromInline
    func postSequenced(
        _ events: PostedEvents,
        ifMatch: String?,
        stamp: ClientStamp,
        completion: @escaping @Sendable (Result<SessionSnapshot, APIError>) -> Void
    ) {
        route(
            events,
            ifMatch: ifMatch,
            PostAnswer(claim: nil, stamp: stamp, durable: false, count: events.count, completion: completion)
        )
    }

    @usableFromInline
    func journalRefusal(_ stamp: ClientStamp, _ refusal: APIError) {
        let step = loop.currentStep
        let record = ClientLedger.record(
            stamp,
            .refused(refusal),
            session: id.description,
            epoch: epoch,
            revision: step.revision
        )
        recorder?.journal([.sequenced(record)])
    }

    @usableFromInline
    func beginSequenced(_ stamp: ClientStamp, remembering capacity: Int) -> ClientLedger.Decision {
        snapshots.clientLedger.withLock { ledger in
            let decision = ledger.begin(stamp, remembering: capacity)
            let forgotten = ledger.takeForgotten()
            if !forgotten.isEmpty {
                recorder?.journal(forgotten.map { .clientForgotten(sessionID: id.description, client: $0) })
            }
            return decision
        }
    }

    @usableFromInline
    func withClientLedger<T>(_ body: (inout ClientLedger) -> T) -> T {
        snapshots.clientLedger.withLock { body(&$0) }
    }

    /// Notes that revision `rev` includes the numbered post `stamp` (under the loop's lock when the batch is queued on
    /// the state it was tried on, so before any stream frames the revision).
    @inlinable
    func mark(_ stamp: ClientStamp, at rev: UInt64) -> [UInt8]? {
        snapshots.clientLedger.withLock { ledger in
            ledger.mark(stamp, at: rev)
            return ledger.marks(at: rev)
        }
    }

    private func route(_ events: PostedEvents, ifMatch: String?, _ post: PostAnswer) {
        // A session whose reduces proved slow is tried and queued on the slow lane: its trial reduce (below) would
        // hold the server thread that received the post.
        if let containment, containment.isOffloaded {
            return containment.onSlowLane { [self] in paths.post(self, events, ifMatch, post) }
        }
        paths.post(self, events, ifMatch, post)
    }

    @inlinable
    func postNow(_ events: PostedEvents, ifMatch: String?, _ post: PostAnswer) {
        touch()
        var decoded = SmallBatch<System.Event>()
        do throws(APIError) {
            for index in 0..<events.count {
                decoded.append(try SystemEvents.decode(events, at: index, of: system), capacity: events.count)
            }
        } catch {
            return post.completion(.failure(error))
        }
        let waiting = inbox.add(decoded.count, ordering: .relaxed).newValue
        guard waiting <= inboxCapacity else {
            inbox.subtract(decoded.count, ordering: .relaxed)
            return post.completion(
                .failure(
                    APIError(
                        .inboxFull,
                        "session \(id) already has \(waiting - decoded.count) events waiting for its reducer "
                            + "(at most \(inboxCapacity)); retry after a moment",
                        retryAfter: 1
                    )
                )
            )
        }
        // `post.count` is `events.count`, set where the answer was made: every event decoded, or the post refused above.
        recorder?.batchStarted()
        let refusal: APIError
        switch submit(decoded, ifMatch: ifMatch, post: post) {
        case .queued:
            return
        case .refused(let error):
            refusal = error
        case .stale(let tags):
            let now = Cursor(epoch: epoch, rev: loop.revision)
            refusal = APIError(
                .preconditionFailed,
                "If-Match \(tags) is not the session's current cursor \(now.entityTag); "
                    + "GET the session and retry with its ETag"
            )
        }
        inbox.subtract(post.count, ordering: .relaxed)
        recorder?.batchEnded(completed: false)
        post.completion(.failure(refusal))
    }

    /// A post's answer, once the loop applied its batch (`step`; nil when the loop stopped first): the snapshot (the
    /// trial's encoding when the batch landed on the state it was tried on), the batch's end for the recorder, and
    /// for a durable post the wait for the journal, one closure on the recorder's.
    @inlinable
    func finish(_ step: Step<System.State, System.Event>?, _ trial: Trial?, _ post: PostAnswer) {
        inbox.subtract(post.count, ordering: .relaxed)
        guard let step else {
            recorder?.batchEnded(completed: false)
            if passivated.load(ordering: .acquiring) { return post.completion(.failure(Self.passivatedProblem(id))) }
            if superseded.load(ordering: .acquiring) {
                return post.completion(.failure(SessionPersistence.movedProblem(id)))
            }
            return post.completion(.failure(APIError(.sessionNotFound, "session \(id) has ended")))
        }
        var snapshot: SessionSnapshot
        if let trial, trial.snapshot.rev == step.revision {
            snapshot = cache(trial.snapshot, weight: trial.weight)
        } else {
            // A tried batch's revision was marked when it was queued (`accepted`). One queued behind others is marked
            // now, after its step's observers cached the revision's snapshot (the recorder's): that one carries the
            // mark too, so a `GET` of the revision names the post as its answer does.
            if let stamp = post.stamp, trial == nil {
                snapshots.remark(step.revision, clients: mark(stamp, at: step.revision))
            }
            snapshot = self.snapshot(of: step.state, rev: step.revision)
        }
        var sequenced: ClientSequence?
        if let stamp = post.stamp {
            // The answer shows the marks of its own revision, this post's among them.
            if snapshot.clients == nil || trial == nil { snapshot = snapshot.with(clients: marks(at: step.revision)) }
            sequenced = ClientLedger.record(
                stamp,
                .applied(snapshot),
                session: id.description,
                epoch: epoch,
                revision: step.revision
            )
        }
        recorder?.batchEnded(
            completed: true,
            answer: post.claim.map { keyedAnswer($0, snapshot) },
            sequenced: sequenced
        )
        guard post.durable else { return post.completion(.success(snapshot)) }
        eventsApplied?.increment(by: post.count)
        guard let recorder else { return post.completion(.success(snapshot)) }
        recorder.whenJournaled(answer: post.completion, with: snapshot)
    }

    @inlinable
    func keyedAnswer(_ claim: IdempotencyClaim, _ snapshot: SessionSnapshot) -> KeyedAnswer {
        KeyedAnswer(
            sessionID: id.description,
            key: claim.key,
            fingerprint: claim.fingerprint,
            epoch: snapshot.cursor.epoch,
            revision: snapshot.rev,
            state: String(decoding: snapshot.state, as: UTF8.self)
        )
    }

    @inlinable
    func marks(at rev: UInt64) -> [UInt8]? {
        snapshots.marks(at: rev)
    }

    @usableFromInline
    func journaledSnapshot() -> SessionSnapshot? {
        let current = snapshot()
        guard let recorder else { return current }
        return recorder.isJournaled(revision: current.rev) ? current : nil
    }

    @usableFromInline
    func observeSnapshots(_ body: @escaping @Sendable (SessionSnapshot) -> Void) -> Observation {
        // With a journal, a state reaches the stream only once the journal holds it, so a step is never shown and
        // then undone: not by a crash before its commit (the restarted session would reach that revision again with
        // another state, and a client resuming from it would take a patch against the wrong base), not by a failed
        // write (the session is re-anchored from the journal), and, with a shared journal, not by another replica's
        // takeover this copy does not know of yet (a timer firing on a replica that woke from a stall).
        // The session's snapshots and recorder held, not the session: a weak reference to it would give it a side
        // table, and every retain and release of it the runtime's slow path.
        let snapshots = snapshots
        let recorder = recorder
        return loop.observe { step in
            let snapshot = snapshots.snapshot(at: step.revision) { Self.encode(step.state) }
            guard let recorder else { return body(snapshot) }
            recorder.whenJournaled(revision: step.revision) { failure in if failure == nil { body(snapshot) } }
        }
    }

    @usableFromInline
    func whenJournaled(_ notify: @escaping @Sendable (APIError?) -> Void) {
        guard let recorder else { return notify(nil) }
        recorder.whenJournaled { [id] error in notify(error.map { Self.notJournaledProblem($0, id) }) }
    }

    /// What a request gets when what it journaled did not become durable: passivated, or the journal's failure.
    @usableFromInline
    static func notJournaledProblem(_ error: JournalError, _ id: SessionID) -> APIError {
        error == SessionRecorder<System>.sealed ? passivatedProblem(id) : SessionPersistence.notJournaled(error)
    }

    @usableFromInline
    func withIdempotencyLedger<T>(_ body: (inout IdempotencyLedger<SessionSnapshot>) -> T) -> T {
        idempotency.withLock { ledger in
            defer { account?.settleAnswers(ledger.weight) }
            return body(&ledger)
        }
    }

    @usableFromInline
    func stop() {
        loop.stop()
        account?.close()
    }

    @usableFromInline
    func supersede() {
        superseded.store(true, ordering: .releasing)
        stop()
    }

    @usableFromInline
    func passivate() {
        passivated.store(true, ordering: .releasing)
        recorder?.seal()
        stop()
    }

    /// What a request caught by the passivation of its session is answered.
    @usableFromInline
    static func passivatedProblem(_ id: SessionID) -> APIError {
        APIError(
            .sessionPassivated,
            "session \(id) left memory (it had been idle) while this request was applied; nothing of the request was "
                + "kept: retry it, and the session is brought back from the journal",
            retryAfter: 1
        )
    }

    deinit {
        account?.close()
    }
}
