import Synchronization

/// A virtual `Clock`: time moves only when `advance(by:)` or `move(to:)` is called, which resumes the sleepers
/// that are due, earliest deadline first (registration order among equal deadlines). No real sleeps. In-process
/// tests use it directly; a server started with `--clock manual` runs every session on one.
///
/// It can also count the effects of the loops it is given to (it is their ``EffectTracking``), so that whoever
/// moves it can wait until everything has *settled* (`settled()`): every effect started is either asleep on this
/// clock or finished, and, since an effect ends only after the events it sent were queued (and reduced, when its
/// thread ran the loop), nothing is under way that time does not hold up.
///
/// Concurrency: a `Mutex` owns the current instant, the sleepers, the effect count and the waiters; continuations
/// are resumed outside it. Cancelling a sleeping task resumes its sleep with `CancellationError`.
public final class TestClock: Clock, EffectTracking, @unchecked Sendable {
    /// An instant of a `TestClock`: a duration since the clock's start.
    public struct Instant: InstantProtocol, Sendable {
        /// Time since the clock's start.
        public let offset: Duration

        /// Creates an instant at `offset` from the clock's start.
        public init(offset: Duration) { self.offset = offset }

        /// The instant `duration` later.
        public func advanced(by duration: Duration) -> Instant { Instant(offset: offset + duration) }

        /// The duration from this instant to `other`.
        public func duration(to other: Instant) -> Duration { other.offset - offset }

        /// Orders instants by offset.
        public static func < (lhs: Instant, rhs: Instant) -> Bool { lhs.offset < rhs.offset }
    }

    private struct Sleeper {
        let id: UInt64
        let deadline: Instant
        let continuation: CheckedContinuation<Void, any Error>
    }

    /// A task waiting for a number of sleepers, or (`count` nil) for the tracked effects to settle.
    private struct Waiter {
        let id: UInt64
        let count: Int?
        let continuation: CheckedContinuation<Bool, Never>
    }

    private struct Core {
        var now = Instant(offset: .zero)
        var nextID: UInt64 = 0
        var sleepers: [Sleeper] = []
        var cancelledIDs: Set<UInt64> = []
        var waiters: [Waiter] = []
        var runningEffects = 0

        /// Tracked effects neither finished nor asleep here. An effect may sleep twice at once (a task group),
        /// hence the floor.
        var busy: Int { max(runningEffects - sleepers.count, 0) }

        mutating func takeSatisfiedWaiters() -> [Waiter] {
            guard !waiters.isEmpty else { return [] }
            let count = sleepers.count
            let settled = busy == 0
            let ready = waiters.filter { $0.count.map { $0 <= count } ?? settled }
            if !ready.isEmpty { waiters.removeAll { $0.count.map { $0 <= count } ?? settled } }
            return ready
        }

        mutating func makeID() -> UInt64 {
            nextID += 1
            return nextID
        }
    }

    private let core = Mutex(Core())

    /// Creates a clock at instant zero.
    public init() {}

    /// The current virtual instant.
    public var now: Instant { core.withLock { $0.now } }

    /// The smallest step: one nanosecond.
    public var minimumResolution: Duration { .nanoseconds(1) }

    /// The number of tasks sleeping on this clock now.
    public var sleeperCount: Int { core.withLock { $0.sleepers.count } }

    /// The earliest instant a sleeper waits for, nil when nobody sleeps.
    public var nextDeadline: Instant? { core.withLock { $0.sleepers.map(\.deadline).min() } }

    /// Tracked effects that are neither asleep on this clock nor finished (an upstream fetch, a reduce under way).
    public var busyEffects: Int { core.withLock { $0.busy } }

    /// Suspends until the clock is moved to or past `deadline`.
    public func sleep(until deadline: Instant, tolerance: Duration? = nil) async throws {
        try Task.checkCancellation()
        let id = core.withLock { $0.makeID() }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let outcome = core.withLock { core -> (Result<Void, any Error>?, [Waiter]) in
                    if core.cancelledIDs.remove(id) != nil { return (.failure(CancellationError()), []) }
                    if deadline <= core.now { return (.success(()), []) }
                    core.sleepers.append(Sleeper(id: id, deadline: deadline, continuation: continuation))
                    return (nil, core.takeSatisfiedWaiters())
                }
                if let result = outcome.0 { continuation.resume(with: result) }
                for waiter in outcome.1 { waiter.continuation.resume(returning: true) }
            }
        } onCancel: {
            let sleeper = core.withLock { core -> Sleeper? in
                guard let index = core.sleepers.firstIndex(where: { $0.id == id }) else {
                    core.cancelledIDs.insert(id)
                    return nil
                }
                return core.sleepers.remove(at: index)
            }
            sleeper?.continuation.resume(throwing: CancellationError())
        }
        // A sleep that finished normally leaves no stale cancellation mark.
        core.withLock { _ = $0.cancelledIDs.remove(id) }
    }

    /// Moves the clock forward and resumes every sleeper whose deadline has come, in deadline order.
    public func advance(by duration: Duration) {
        move(to: now.advanced(by: duration))
    }

    /// Moves the clock to `instant` (never back) and resumes every sleeper whose deadline has come, in deadline
    /// order. Returns how many it resumed.
    @discardableResult
    public func move(to instant: Instant) -> Int {
        let due = core.withLock { core -> [Sleeper] in
            if instant > core.now { core.now = instant }
            let now = core.now
            let due = core.sleepers.enumerated()
                .filter { $0.element.deadline <= now }
                .sorted { ($0.element.deadline, $0.offset) < ($1.element.deadline, $1.offset) }
                .map(\.element)
            core.sleepers.removeAll { $0.deadline <= now }
            return due
        }
        for sleeper in due { sleeper.continuation.resume() }
        return due.count
    }

    /// Returns once at least `count` tasks sleep on this clock: a deterministic signal that effects reached
    /// their sleep.
    public func waitForSleepers(count: Int = 1) async {
        _ = await wait(for: count)
    }

    /// Returns true once every tracked effect is asleep on this clock or finished (at once when that is so now),
    /// false when the task is cancelled first.
    public func settled() async -> Bool {
        await wait(for: nil)
    }

    /// Waits for `count` sleepers, or for the tracked effects to settle when nil; false when cancelled first.
    private func wait(for count: Int?) async -> Bool {
        let id = core.withLock { $0.makeID() }
        let result = await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
                let ready = core.withLock { core -> Bool? in
                    if core.cancelledIDs.remove(id) != nil { return false }
                    let met = count.map { core.sleepers.count >= $0 } ?? (core.busy == 0)
                    if met { return true }
                    core.waiters.append(Waiter(id: id, count: count, continuation: continuation))
                    return nil
                }
                if let ready { continuation.resume(returning: ready) }
            }
        } onCancel: {
            let waiter = core.withLock { core -> Waiter? in
                guard let index = core.waiters.firstIndex(where: { $0.id == id }) else {
                    core.cancelledIDs.insert(id)
                    return nil
                }
                return core.waiters.remove(at: index)
            }
            waiter?.continuation.resume(returning: false)
        }
        core.withLock { _ = $0.cancelledIDs.remove(id) }
        return result
    }

    // MARK: - EffectTracking

    /// Counts an effect as running.
    public func effectStarted() {
        core.withLock { $0.runningEffects += 1 }
    }

    /// Counts an effect as finished; resumes the waiters of `settled()` when nothing is busy any more.
    public func effectEnded() {
        let ready = core.withLock { core -> [Waiter] in
            core.runningEffects -= 1
            return core.takeSatisfiedWaiters()
        }
        for waiter in ready { waiter.continuation.resume(returning: true) }
    }
}
