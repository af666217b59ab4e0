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
}
