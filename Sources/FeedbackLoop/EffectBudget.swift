/// How many events a loop's feedbacks may send: a sustained rate and a burst (a token bucket). A client's events
/// (``Loop/send(_:)`` and the batch sends) are never counted, only those of feedbacks and their effects.
///
/// Over the rate the loop is *throttled*: the feedbacks' events wait for the bucket to refill, in order (the
/// events queued behind them wait too). A loop that stays over its rate for `runawayAfter` is a *runaway*: its
/// feedbacks are stopped (every running effect is cancelled, their queued events are dropped), the loop's
/// ``LoopSupervising`` is told which feedback sent the most, and clients' events are still reduced and observed.
/// ``Loop/resumeFeedbacks()`` starts the feedbacks again on the current state.
public struct EffectBudget: Sendable, Equatable {
    /// The sustained rate of feedback events per second.
    public var eventsPerSecond: Int
    /// The events the bucket holds when full: what a feedback may send at once after a quiet spell.
    public var burst: Int
    /// How long a loop may stay over its rate (throttled with no quiet second between) before it is a runaway.
    public var runawayAfter: Duration

    /// A budget; `eventsPerSecond` and `burst` are at least 1.
    public init(eventsPerSecond: Int, burst: Int, runawayAfter: Duration) {
        self.eventsPerSecond = max(eventsPerSecond, 1)
        self.burst = max(burst, 1)
        self.runawayAfter = runawayAfter
    }

    /// The throttle's shortest wait: a throttled loop takes its events in slices of at least this much time, not
    /// one sleep per event.
    static var slice: Duration { .milliseconds(10) }
}

/// Told by a loop when its feedbacks go over their ``EffectBudget``. Called on the engine owner's thread, outside
/// the loop's lock: it may read the loop, not block.
public protocol LoopSupervising: AnyObject, Sendable {
    /// The feedbacks' events began to wait for the budget; `feedback` is the index of the one that sent the most
    /// since the budget was last met.
    func feedbacksThrottled(feedback: Int)
    /// The loop stayed over its budget for `runawayAfter`: its feedbacks are stopped. `feedback` as above.
    func feedbacksStopped(feedback: Int)
}

/// The token bucket of a loop's ``EffectBudget``, kept in its core under the engine lock.
@usableFromInline
struct EffectBucket: Sendable {
    @usableFromInline
    enum Verdict: Sendable {
        case take
        /// Throttled: try again after this long; `first` when this starts a throttled spell.
        case wait(Duration, first: Bool)
        case runaway
    }

    @usableFromInline
    let budget: EffectBudget
    @usableFromInline
    var tokens: Int
    var refilledAt: ContinuousClock.Instant
    /// When the current spell over the rate began; nil while the budget is met.
    var overSince: ContinuousClock.Instant?
    /// When the bucket last ran dry.
    var lastDry: ContinuousClock.Instant?
    /// Events taken per feedback since the budget was last met.
    @usableFromInline
    var counts: [Int]

    @usableFromInline
    init(budget: EffectBudget, feedbacks: Int, now: ContinuousClock.Instant = .now) {
        self.budget = budget
        tokens = budget.burst
        refilledAt = now
        counts = Array(repeating: 0, count: max(feedbacks, 1))
    }

    /// One event of feedback `origin` wants to be reduced. The clock is read only when the bucket is empty.
    @inlinable
    mutating func take(origin: Int) -> Verdict {
        if tokens > 0 {
            tokens &-= 1
            if origin < counts.count { counts[origin] &+= 1 }
            return .take
        }
        return refill(origin: origin, now: .now)
    }

    @usableFromInline
    mutating func refill(origin: Int, now: ContinuousClock.Instant) -> Verdict {
        let rate = budget.eventsPerSecond
        let elapsed = refilledAt.duration(to: now)
        let earned = Self.events(in: elapsed, rate: rate)
        if earned > 0 {
            tokens = min(budget.burst, earned)
            refilledAt = now
        }
        // A second without running dry ends a spell over the rate.
        if let lastDry, lastDry.duration(to: now) > .seconds(1) + Self.interval(rate) {
            overSince = nil
            counts = Array(repeating: 0, count: counts.count)
        }
        if tokens > 0 {
            tokens &-= 1
            if origin < counts.count { counts[origin] &+= 1 }
            return .take
        }
        lastDry = now
        let first = overSince == nil
        let since = overSince ?? now
        overSince = since
        if since.duration(to: now) >= budget.runawayAfter { return .runaway }
        return .wait(max(Self.interval(rate), EffectBudget.slice), first: first)
    }

    /// The feedback that sent the most in the current spell.
    @usableFromInline
    var loudest: Int {
        var best = 0
        for index in counts.indices where counts[index] > counts[best] { best = index }
        return best
    }

    /// A fresh bucket after a resume.
    @usableFromInline
    mutating func reset(now: ContinuousClock.Instant = .now) {
        tokens = budget.burst
        refilledAt = now
        overSince = nil
        lastDry = nil
        counts = Array(repeating: 0, count: counts.count)
    }

    static func interval(_ rate: Int) -> Duration { .nanoseconds(1_000_000_000 / Int64(rate)) + .nanoseconds(1) }

    static func events(in elapsed: Duration, rate: Int) -> Int {
        let (seconds, attoseconds) = elapsed.components
        guard seconds >= 0 else { return 0 }
        let whole = seconds.multipliedReportingOverflow(by: Int64(rate))
        if whole.overflow { return Int.max }
        return Int(whole.partialValue + attoseconds / 1_000_000_000 * Int64(rate) / 1_000_000_000)
    }
}

/// The sink one feedback of a loop sends through: it tags the feedback's events (and its effects') with the
/// feedback's index, so that the loop can count them against its ``EffectBudget`` and name the one that runs away.
///
/// Refers to the loop weakly: a feedback may keep its sink after the loop is gone. `bind` is called once, before
/// the loop hands the sink to any feedback.
@usableFromInline
final class FeedbackSink<State: Sendable, Event: Sendable>: EventSink<Event>, @unchecked Sendable {
    @usableFromInline
    weak var loop: Loop<State, Event>?
    @usableFromInline
    let origin: Int
    /// The feedback's reactor in its loop: set at the loop's init and replaced on a resume, both by the engine
    /// owner, which alone calls it.
    @usableFromInline
    var reactor: Reactor<Event>?

    @usableFromInline
    init(origin: Int) {
        self.origin = origin
    }

    @usableFromInline
    override func deliver(_ event: Event, ticket: EffectTicket?) {
        loop?.accept(event, ticket: ticket, origin: origin)
    }

    @usableFromInline
    override func weakened() -> EventSink<Event> { WeakEventSink(self) }

    @usableFromInline
    override var effectTracker: (any EffectTracking)? { loop?.tracker }

    @usableFromInline
    override var effectExecutor: (any TaskExecutor)? { loop?.executorOfEffects }
}

/// What a loop with an ``EffectBudget`` keeps beyond a plain loop: the feedbacks as given (to name them and to attach
/// them anew on a resume), their tagging sinks, the supervisor, and the bucket.
///
/// Concurrency: `bucket` is changed only under the loop's engine lock; `reattach()` is called only by the engine
/// owner; the rest is immutable.
@usableFromInline
final class LoopGovernance<State: Sendable, Event: Sendable>: @unchecked Sendable {
    @usableFromInline
    let feedbacks: [Feedback<State, Event>]
    @usableFromInline
    let sinks: [FeedbackSink<State, Event>]
    @usableFromInline
    let supervisor: (any LoopSupervising)?
    @usableFromInline
    var bucket: EffectBucket
    /// Feedback events queued and not yet taken (under the engine lock).
    @usableFromInline
    var waiting = 0
    /// Feedback events dropped because `waiting` had reached the burst (under the engine lock).
    @usableFromInline
    var dropped = 0

    @usableFromInline
    init(budget: EffectBudget, feedbacks: [Feedback<State, Event>], supervisor: (any LoopSupervising)?) {
        self.feedbacks = feedbacks
        sinks = feedbacks.indices.map { FeedbackSink<State, Event>(origin: $0) }
        self.supervisor = supervisor
        bucket = EffectBucket(budget: budget, feedbacks: feedbacks.count)
    }

    /// Attaches every feedback anew (a resume after a runaway: their old reactors were told to stop).
    @usableFromInline
    func reattach() {
        for (index, sink) in sinks.enumerated() { sink.reactor = feedbacks[index].attach() }
    }
}

/// A task executor in a box: a loop that is offloaded keeps one reference instead of an existential in its core.
@usableFromInline
final class ExecutorBox: Sendable {
    @usableFromInline
    let executor: any TaskExecutor

    @usableFromInline
    init(_ executor: any TaskExecutor) {
        self.executor = executor
    }
}
