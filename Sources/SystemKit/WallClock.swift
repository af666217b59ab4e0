/// The wall-clock time a system's durable timers read and sleep on: `now()` to compute a deadline to keep in the
/// state, `sleep(until:)` to wait for one.
///
/// The server uses `system` (the machine's real time); a test, or a server whose clock tests move, uses
/// `following(_:from:)` over its own clock, so that advancing that clock advances the wall time too.
/// A value of two closures: safe to pass anywhere.
public struct WallClock: Sendable {
    private let read: @Sendable () -> WallTime
    private let wait: @Sendable (WallTime) async throws -> Void

    /// A wall clock from its two operations.
    public init(
        now: @escaping @Sendable () -> WallTime,
        sleepUntil: @escaping @Sendable (WallTime) async throws -> Void
    ) {
        read = now
        wait = sleepUntil
    }

    /// The time now.
    public func now() -> WallTime { read() }

    /// Returns once `deadline` has come (at once when it has already); throws `CancellationError` when the task
    /// is cancelled first.
    public func sleep(until deadline: WallTime) async throws { try await wait(deadline) }

    /// The machine's real time (`CLOCK_REALTIME`), waited for on `ContinuousClock`. A sleep looks at the real time
    /// again when it wakes and sleeps on while the deadline has not come, so a wall clock set back by hand or by
    /// NTP cannot make a timer fire early.
    public static let system = WallClock(
        now: { WallTime.now() },
        sleepUntil: { deadline in
            let clock = ContinuousClock()
            while true {
                let remaining = WallTime.now().duration(to: deadline)
                if remaining <= .zero { return }
                try await clock.sleep(for: remaining)
            }
        }
    )

    /// The wall time that starts at `origin` now and moves as `clock` does: a `TestClock` advanced by a minute
    /// moves it by a minute.
    public static func following<C: Clock>(_ clock: C, from origin: WallTime) -> WallClock
    where C.Duration == Duration {
        let start = clock.now
        let now: @Sendable () -> WallTime = { origin.advanced(by: start.duration(to: clock.now)) }
        return WallClock(
            now: now,
            sleepUntil: { deadline in
                let remaining = now().duration(to: deadline)
                if remaining > .zero { try await clock.sleep(for: remaining) }
                try Task.checkCancellation()
            }
        )
    }
}
