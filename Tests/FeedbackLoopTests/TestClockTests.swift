import FeedbackLoop
import Testing

@Suite(.timeLimit(.minutes(1)))
struct TestClockTests {
    @Test func advanceResumesDueSleepersInDeadlineOrderAndNoOthers() async {
        let clock = TestClock()
        let woke = Recorder<Int>()
        let tasks = [3, 1, 2].map { seconds in
            Task {
                try await clock.sleep(for: .seconds(seconds))
                woke.append(seconds)
            }
        }
        await clock.waitForSleepers(count: 3)
        clock.advance(by: .milliseconds(1500))
        _ = await tasks[1].result
        #expect(woke.all == [1])
        #expect(clock.sleeperCount == 2)
        clock.advance(by: .seconds(2))
        for task in tasks { _ = await task.result }
        #expect(woke.all.count == 3)
        #expect(clock.now == TestClock.Instant(offset: .milliseconds(3500)))
    }

    @Test func cancellingASleeperEndsItsSleepWithCancellationError() async {
        let clock = TestClock()
        let task = Task { try await clock.sleep(for: .seconds(10)) }
        await clock.waitForSleepers(count: 1)
        task.cancel()
        let result = await task.result
        #expect(throws: CancellationError.self) { try result.get() }
        #expect(clock.sleeperCount == 0)
    }

    @Test func sleepUntilAPastDeadlineReturnsAtOnce() async throws {
        let clock = TestClock()
        clock.advance(by: .seconds(5))
        try await clock.sleep(until: TestClock.Instant(offset: .seconds(1)), tolerance: nil)
        #expect(clock.sleeperCount == 0)
    }

    /// An effect that sleeps a second on the clock, then waits for something else (a stand-in for an upstream
    /// fetch), then sends its event: asleep, it is settled; once the clock moved it is busy until it has sent
    /// its event and that event was reduced.
    @Test func settledWaitsForAnEffectUntilItsEventIsReduced() async {
        let clock = TestClock()
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
        #expect(clock.nextDeadline == TestClock.Instant(offset: .seconds(1)))
        #expect(await clock.settled())
        #expect(clock.move(to: TestClock.Instant(offset: .milliseconds(999))) == 0)
        #expect(clock.busyEffects == 0)
        #expect(clock.move(to: TestClock.Instant(offset: .seconds(1))) == 1)
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
        let clock = TestClock()
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
        let clock = TestClock()
        clock.move(to: TestClock.Instant(offset: .seconds(5)))
        clock.move(to: TestClock.Instant(offset: .seconds(1)))
        #expect(clock.now == TestClock.Instant(offset: .seconds(5)))
    }

    /// A `custom` feedback waiting for the loop's next state is idle, not busy: the clock is settled while it waits,
    /// busy from the state that wakes it until its event was reduced, and settled again once it waits on the clock.
    @Test func aCustomFeedbackWaitingForStatesIsSettled() async {
        let clock = TestClock()
        let loop = Loop<Int, Int>(
            initial: 0,
            reduce: { state, event in state += event },
            feedbacks: [
                .custom { (states: AsyncStream<Int>) in
                    states.filter { $0 == 1 }.map { @Sendable _ in
                        try await clock.sleep(for: .seconds(1))
                        return 10
                    }
                }
            ],
            effectTracker: clock
        )
        #expect(await clock.settled())
        loop.send(1)
        await clock.waitForSleepers(count: 1)
        #expect(await clock.settled())
        #expect(clock.move(to: TestClock.Instant(offset: .seconds(1))) == 1)
        #expect(await clock.settled())
        #expect(loop.state == 11)
        #expect(clock.busyEffects == 0)
        loop.stop()
        #expect(await clock.settled())
    }
}
