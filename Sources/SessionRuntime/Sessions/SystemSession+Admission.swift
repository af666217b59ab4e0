public import CoreMetrics
public import Dispatch
public import FeedbackLoop
public import SystemKit

// Not nested in the generic `SystemSession`: a type nested there is generic too, and the session's code that runs
// unspecialised (its witnesses behind `any HostedSession`) would look up its metadata at every use.

/// What a post's answer needs: its idempotency claim, whether it waits for the journal, how many events it
/// brought, and where the answer goes. `finish` gives it.
@usableFromInline
struct PostAnswer: Sendable {
    @usableFromInline var claim: IdempotencyClaim?
    /// A client's numbered post (issue 34): its revision is marked for the streams, when its batch is queued on the
    /// state it was tried on (`finish` gets the trial), else when it is answered.
    @usableFromInline var stamp: ClientStamp? = nil
    @usableFromInline var durable: Bool
    /// The events it brought (each decodes, or the post is refused before it counts).
    @usableFromInline var count: Int
    @usableFromInline var completion: @Sendable (Result<SessionSnapshot, APIError>) -> Void
}

/// What a batch made of a copy of the state: its snapshot, and its weight for the budget.
@usableFromInline
struct Trial: Sendable {
    @usableFromInline
    let snapshot: SessionSnapshot
    @usableFromInline
    let weight: SessionBudget.Weight

    @usableFromInline
    init(snapshot: SessionSnapshot, weight: SessionBudget.Weight) {
        self.snapshot = snapshot
        self.weight = weight
    }
}

/// What `submit` did with a batch.
@usableFromInline
enum Submission {
    /// Queued; `finish` is (or was already) called.
    case queued
    /// Refused before anything was queued: the state would pass its limit, or the budget has no room.
    case refused(APIError)
    /// `If-Match` does not name the current cursor; nothing was queued.
    case stale(String)
}

/// How a post's events reach the loop: checked against the per-state limit and the memory budget first, on a copy.
extension SystemSession {
    /// Queues `events` unless what they make of the state is refused. The reducer is pure, so the batch is first
    /// reduced on a copy of the current state and the copy encoded: a state past `session.state.max.bytes`, or a
    /// growth the budget has no room for, is refused with the session untouched, nothing journaled. Otherwise the
    /// batch is queued only if it will be reduced right after the state it was tried on (compare-and-send under the
    /// loop's lock), so the check holds for the state it lands on, and the trial's encoding is the answer's.
    ///
    /// When the state moved on meanwhile (another post's events or an effect's were queued first), a post with
    /// `If-Match` is stale; one without is queued behind them, checked against the state as it was when it arrived:
    /// only posts racing on one session can then pass the per-state limit together, by what each adds.
    @inlinable
    func submit(_ events: SmallBatch<System.Event>, ifMatch: String?, post: PostAnswer) -> Submission {
        guard post.stamp != nil, ifMatch == nil else { return submitOnce(events, ifMatch: ifMatch, post: post) }
        // A numbered post lands on the state it was tried on, so that its revision is known (and marked for the
        // streams) before any observer sees it: tried again while others' events got in first, a few times.
        for _ in 0..<Self.sequencedAttempts {
            switch submitOnce(events, ifMatch: "", post: post) {
            case .stale: continue
            case let other: return other
            }
        }
        return submitOnce(events, ifMatch: nil, post: post)
    }

    /// How often a numbered post is tried on a newer state before it is queued behind the others (marked late).
    @inlinable
    static var sequencedAttempts: Int { 16 }

    /// `ifMatch` "" (a numbered post's attempt): conditional on the current revision, stale when it moved.
    @inlinable
    func submitOnce(_ events: SmallBatch<System.Event>, ifMatch: String?, post: PostAnswer) -> Submission {
        // Made where needed: a closure made on every post and rarely called cost an allocation each.
        func untried() -> Loop<System.State, System.Event>.Completion { { [self] in finish($0, nil, post) } }
        if account == nil && ifMatch == nil {
            loop.send(events.array, ifRevision: nil, completion: untried())
            return .queued
        }
        let step = loop.currentStep
        if let tags = ifMatch, !tags.isEmpty, !Cursor(epoch: epoch, rev: step.revision).matches(entityTags: tags) {
            return .stale(tags)
        }
        let revision = step.revision &+ UInt64(events.count)
        var state = step.state
        // The trial is the batch's one reduce: the states it makes are the loop's when the batch is queued right
        // behind the state it was tried on. It runs the system's reducer on this thread, marked and timed like the
        // loop's reduces.
        var states = SmallBatch<System.State>()
        for offset in 0..<events.count {
            let event = events[offset]
            containment?.stepStarted(revision: step.revision &+ UInt64(offset) &+ 1)
            let start = DispatchTime.now().uptimeNanoseconds
            System.reduce(&state, event)
            let elapsed = Int64(clamping: DispatchTime.now().uptimeNanoseconds &- start)
            containment?.stepEnded()
            reduceTimer?.recordNanoseconds(elapsed)
            if let containment, containment.isSlow(elapsed) {
                containment.reducedSlowly(nanoseconds: elapsed, event: SessionGuard.describe(event))
            }
            states.append(state, capacity: events.count)
        }
        let encoded = Self.encode(state)
        let weight = SessionBudget.weigh(encoded)
        let trial = Trial(
            snapshot: SessionSnapshot(
                cursor: Cursor(epoch: epoch, rev: step.revision &+ UInt64(events.count)),
                state: encoded
            ),
            weight: weight
        )
        // Admitted by the memory budget, when the session counts against one.
        var previous: SessionBudget.Weight?
        if let account {
            switch account.admitState(weight) {
            case .failure(let refusal): return .refused(refusal)
            case .success(let before): previous = before
            }
        }
        // Accepted: the trial's encoding is the last step's, cached before any observer (a stream) asks for it.
        let stamp = post.stamp  // what `accepted` needs of the answer, not a copy of all of it
        let accepted = { [self] in
            let marks = stamp.map { mark($0, at: revision) }
            _ = cache(marks.map { trial.snapshot.with(clients: $0) } ?? trial.snapshot, weight: trial.weight)
        }
        let completion: Loop<System.State, System.Event>.Completion = { [self] in finish($0, trial, post) }
        if loop.send(events, applying: states, ifRevision: step.revision, accepted: accepted, completion: completion) {
            return .queued
        }
        guard let tags = ifMatch else {
            loop.send(events.array, ifRevision: nil, completion: untried())
            return .queued
        }
        if let account, let previous { account.revertState(from: weight, to: previous) }
        return .stale(tags)
    }
}
