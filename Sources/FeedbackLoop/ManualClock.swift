import Synchronization

/// A `Clock` that moves only when told (`move(to:)`), for a server whose tests move time: the clock of every session
/// of a server started with `--clock manual`. It also counts the effects of the loops it tracks (it is their
/// ``EffectTracking``), so that whoever moves it can wait until everything has *settled*: every effect started is
/// either sleeping on this clock or finished, and, since an effect ends only after the events it sent were
/// queued (and reduced, when its thread ran the loop), nothing is under way that time does not hold up.
///
/// Unlike ``TestClock`` it has no notion of an origin's wall time; pair it with `WallClock.following(_:from:)`.
///
/// Concurrency: a `Mutex` owns the instant, the sleepers, the effect count and the waiters; continuations are
/// resumed outside it. Cancelling a sleeping task resumes its sleep with `CancellationError`.
public final class ManualClock: Clock, EffectTracking, @unchecked Sendable {
    /// An instant of a `ManualClock`: a duration since its start.
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

    private struct Waiter {
        let id: UInt64
        let continuation: CheckedContinuation<Bool, Never>
    }

    private struct Core {
        var now: Instant
        var nextID: UInt64 = 0
        var sleepers: [Sleeper] = []
        var cancelledIDs: Set<UInt64> = []
        var runningEffects = 0
        var waiters: [Waiter] = []

        /// Effects started and neither finished nor asleep here. An effect may sleep twice at once (a task group),
        /// hence the floor.
        var busy: Int { max(runningEffects - sleepers.count, 0) }

        mutating func takeWaitersIfSettled() -> [Waiter] {
            guard busy == 0, !waiters.isEmpty else { return [] }
            defer { waiters = [] }
            return waiters
        }
    }

    private let core: Mutex<Core>

    /// Creates a clock at `start` (instant zero by default).
    public init(start: Instant = Instant(offset: .zero)) {
        core = Mutex(Core(now: start))
    }

    /// The current instant.
    public var now: Instant { core.withLock { $0.now } }

    /// The smallest step: one nanosecond.
    public var minimumResolution: Duration { .nanoseconds(1) }

    /// The number of tasks sleeping on this clock now.
    public var sleeperCount: Int { core.withLock { $0.sleepers.count } }

    /// The earliest instant a sleeper waits for, nil when nobody sleeps.
    public var nextDeadline: Instant? { core.withLock { $0.sleepers.map(\.deadline).min() } }

    /// Effects that are neither asleep on this clock nor finished (an upstream fetch, a reduce under way).
    public var busyEffects: Int { core.withLock { $0.busy } }

    /// Suspends until `move(to:)` brings the clock to or past `deadline`.
    public func sleep(until deadline: Instant, tolerance: Duration? = nil) async throws {
        try Task.checkCancellation()
        let id = core.withLock { core -> UInt64 in
            core.nextID += 1
            return core.nextID
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let outcome = core.withLock { core -> (Result<Void, any Error>?, [Waiter]) in
                    if core.cancelledIDs.remove(id) != nil { return (.failure(CancellationError()), []) }
                    if deadline <= core.now { return (.success(()), []) }
                    core.sleepers.append(Sleeper(id: id, deadline: deadline, continuation: continuation))
                    return (nil, core.takeWaitersIfSettled())
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

    /// Moves the clock to `instant` (never back) and resumes every sleeper whose deadline has come, earliest first
    /// (registration order among equal deadlines). Returns how many it resumed.
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

    /// Returns true once every tracked effect is asleep on this clock or finished (at once when that is so now),
    /// false when the task is cancelled first.
    public func settled() async -> Bool {
        let id = core.withLock { core -> UInt64 in
            core.nextID += 1
            return core.nextID
        }
        let result = await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
                let now = core.withLock { core -> Bool? in
                    if core.cancelledIDs.remove(id) != nil { return false }
                    if core.busy == 0 { return true }
                    core.waiters.append(Waiter(id: id, continuation: continuation))
                    return nil
                }
                if let now { continuation.resume(returning: now) }
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
            return core.takeWaitersIfSettled()
        }
        for waiter in ready { waiter.continuation.resume(returning: true) }
    }
}
