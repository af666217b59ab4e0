import FeedbackLoop
import Testing

/// `ManualClock`: sleepers resume only when it is moved, and `settled()` answers only once every tracked effect is
/// asleep on it or ended, its events reduced.
@Suite(.timeLimit(.minutes(1)))
struct ManualClockTests {
    /// An effect that sleeps a second on the clock, then waits for something else (a stand-in for an upstream
    /// fetch), then sends its event: asleep, it is settled; once the clock moved it is busy until it has sent
    /// its event and that event was reduced.
    @Test func settledWaitsForAnEffectUntilItsEventIsReduced() async {
        let clock = ManualClock()
        let (gate, opener) = AsyncStream.makeStream(of: Void.self)
        let loop = Loop<Int, Int>(
            initial: 0,
            reduce: { state, event in state += event },
            feedbacks: [
                .react(
                    request: { $0 == 0 ? 0 : nil },
                    effect: { _ in
                        try await clock.sleep(for: .seconds(1))
                        for await _ in gate { break }
                        return 1
                    }
                )
            ],
            effectTracker: clock
        )
        #expect(clock.sleeperCount == 1)
        #expect(clock.nextDeadline == ManualClock.Instant(offset: .seconds(1)))
        #expect(await clock.settled())
        #expect(clock.move(to: ManualClock.Instant(offset: .milliseconds(999))) == 0)
        #expect(clock.busyEffects == 0)
        #expect(clock.move(to: ManualClock.Instant(offset: .seconds(1))) == 1)
        #expect(clock.busyEffects == 1)
        let settled = Task { await clock.settled() }
        opener.yield()
        #expect(await settled.value)
        #expect(loop.state == 1)
        #expect(clock.busyEffects == 0)
        #expect(clock.sleeperCount == 0)
    }

    /// A sleeper cancelled before its deadline ends its sleep with `CancellationError`, and its effect counts as
    /// ended: a loop that stops leaves the clock settled.
    @Test func aStoppedLoopLeavesTheClockSettled() async {
        let clock = ManualClock()
        let loop = Loop<Int, Int>(
            initial: 0,
            reduce: { state, event in state += event },
            feedbacks: [
                .react(
                    request: { _ in 0 },
                    effect: { _ in
                        try await clock.sleep(for: .seconds(60))
                        return 1
                    }
                )
            ],
            effectTracker: clock
        )
        #expect(clock.sleeperCount == 1)
        loop.stop()
        #expect(await clock.settled())
        #expect(clock.sleeperCount == 0)
        #expect(loop.state == 0)
    }

    /// The clock never goes back.
    @Test func movingBackLeavesTheClockWhereItIs() {
        let clock = ManualClock()
        clock.move(to: ManualClock.Instant(offset: .seconds(5)))
        clock.move(to: ManualClock.Instant(offset: .seconds(1)))
        #expect(clock.now == ManualClock.Instant(offset: .seconds(5)))
    }
}
