import Synchronization

/// A virtual `Clock` for tests: time moves only when `advance(by:)` is called, which resumes the sleepers that
/// are due, earliest deadline first (registration order among equal deadlines). No real sleeps.
///
/// Concurrency: a `Mutex` owns the current instant, the sleepers and the waiters; continuations are resumed
/// outside it. Cancelling a sleeping task resumes its sleep with `CancellationError`.
public final class TestClock: Clock, @unchecked Sendable {
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

    private struct Waiter {
        let count: Int
        let continuation: CheckedContinuation<Void, Never>
    }

    private struct Core {
        var now = Instant(offset: .zero)
        var nextID: UInt64 = 0
        var sleepers: [Sleeper] = []
        var cancelledIDs: Set<UInt64> = []
        var waiters: [Waiter] = []
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

    /// Suspends until `advance(by:)` moves the clock to or past `deadline`.
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
                    return (nil, Self.takeSatisfiedWaiters(&core))
                }
                if let result = outcome.0 { continuation.resume(with: result) }
                for waiter in outcome.1 { waiter.continuation.resume() }
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
        let due = core.withLock { core -> [Sleeper] in
            core.now = core.now.advanced(by: duration)
            let now = core.now
            let due = core.sleepers.enumerated()
                .filter { $0.element.deadline <= now }
                .sorted { ($0.element.deadline, $0.offset) < ($1.element.deadline, $1.offset) }
                .map(\.element)
            core.sleepers.removeAll { $0.deadline <= now }
            return due
        }
        for sleeper in due { sleeper.continuation.resume() }
    }

    /// Returns once at least `count` tasks sleep on this clock: a deterministic signal that effects reached
    /// their sleep.
    public func waitForSleepers(count: Int = 1) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let ready = core.withLock { core -> Bool in
                if core.sleepers.count >= count { return true }
                core.waiters.append(Waiter(count: count, continuation: continuation))
                return false
            }
            if ready { continuation.resume() }
        }
    }

    private static func takeSatisfiedWaiters(_ core: inout Core) -> [Waiter] {
        let count = core.sleepers.count
        let ready = core.waiters.filter { $0.count <= count }
        core.waiters.removeAll { $0.count <= count }
        return ready
    }
}
