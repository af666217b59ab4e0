import FeedbackLoop
import Synchronization
import Testing

/// The feedbacks' budget (issue 31, item 2): a storm of feedback events is throttled to the budget's rate, then
/// stopped as a runaway naming its feedback; clients' events still go through; a resume starts the feedbacks again.
@Suite(.timeLimit(.minutes(1)))
struct EffectBudgetTests {
    /// Remembers what a loop reported.
    final class Reports: LoopSupervising {
        let throttled = Mutex<[Int]>([])
        let stopped = Mutex<[Int]>([])
        private let waiter = Mutex<CheckedContinuation<Void, Never>?>(nil)

        func feedbacksThrottled(feedback: Int) { throttled.withLock { $0.append(feedback) } }

        func feedbacksStopped(feedback: Int) {
            stopped.withLock { $0.append(feedback) }
            waiter.withLock { waiting in
                waiting?.resume()
                waiting = nil
            }
        }

        /// Returns once `count` stops were reported.
        func waitForStops(_ count: Int) async {
            await withCheckedContinuation { continuation in
                let ready = waiter.withLock { waiting -> Bool in
                    if stopped.withLock({ $0.count }) >= count { return true }
                    waiting = continuation
                    return false
                }
                if ready { continuation.resume() }
            }
        }
    }

    /// A counter whose second feedback emits on every state without suspending; the first emits once.
    static func stormyLoop(budget: EffectBudget, reports: Reports) -> Loop<Int, Int> {
        Loop<Int, Int>(
            initial: 0,
            reduce: { $0 += $1 },
            feedbacks: [
                .react(request: { $0 == 0 ? 0 : nil }, effect: { _ in 1 }).named("once"),
                .react(request: { $0 }, effect: { _ in 1 }).named("storm"),
            ],
            budget: budget,
            supervisor: reports
        )
    }

    @Test func aStormIsThrottledToItsRateThenStoppedNamingItsFeedback() async {
        let reports = Reports()
        let budget = EffectBudget(eventsPerSecond: 2_000, burst: 200, runawayAfter: .milliseconds(300))
        let clock = ContinuousClock()
        let start = clock.now
        let loop = Self.stormyLoop(budget: budget, reports: reports)
        await reports.waitForStops(1)
        let elapsed = start.duration(to: clock.now)
        let reduced = loop.revision
        // A token bucket lets through at most the burst plus the rate over the time it ran (one slice of slack).
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        #expect(Double(reduced) <= Double(budget.burst) + Double(budget.eventsPerSecond) * (seconds + 0.02))
        #expect(reduced > UInt64(budget.burst))
        // One spell over the rate, or more if a loaded machine let a second pass between two of its slices.
        let throttled = reports.throttled.withLock { $0 }
        #expect(!throttled.isEmpty && throttled.allSatisfy { $0 == 1 })
        #expect(reports.stopped.withLock { $0 } == [1])
        #expect(loop.feedbackName(at: 1) == "storm")
        #expect(loop.feedbacksAreStopped)
        // Stopped: the state no longer grows by itself, and a client's event still goes through, once.
        let before = loop.revision
        loop.send(contentsOf: [1_000]) { _ in }
        for await step in loop.steps where step.revision > before { break }
        #expect(loop.revision == before + 1)
        #expect(loop.state == Int(before) + 1_000)
        loop.stop()
    }

    @Test func aResumeStartsTheFeedbacksAgainOnTheCurrentState() async {
        let reports = Reports()
        let budget = EffectBudget(eventsPerSecond: 5_000, burst: 100, runawayAfter: .milliseconds(100))
        let loop = Self.stormyLoop(budget: budget, reports: reports)
        await reports.waitForStops(1)
        let stoppedAt = loop.revision
        loop.resumeFeedbacks()
        // The storm starts again from the state of the resume, and runs away again.
        await reports.waitForStops(2)
        #expect(loop.revision > stoppedAt)
        #expect(reports.stopped.withLock { $0 } == [1, 1])
        loop.stop()
    }

    /// A loop started with its feedbacks stopped (a host's fork, whose effects wait for a client): they see nothing,
    /// clients' events are reduced, and a resume shows them the state of that moment, with or without a budget.
    @Test(arguments: [false, true])
    func aLoopStartedWithItsFeedbacksStoppedRunsThemOnlyOnceResumed(budgeted: Bool) {
        let seen = Mutex<[Int]>([])
        let loop = Loop<Int, Int>(
            initial: 0,
            reduce: { $0 += $1 },
            feedbacks: [
                .steps { state, _, sink in
                    seen.withLock { $0.append(state) }
                    if state < 5 { sink.send(1) }
                }
            ],
            budget: budgeted ? EffectBudget(eventsPerSecond: 100, burst: 100, runawayAfter: .seconds(1)) : nil,
            feedbacksStopped: true
        )
        #expect(loop.feedbacksAreStopped)
        #expect(loop.state == 0)
        loop.send(2)
        #expect(loop.state == 2)
        #expect(seen.withLock { $0 }.isEmpty)
        loop.resumeFeedbacks()
        #expect(!loop.feedbacksAreStopped)
        #expect(loop.state == 5)
        #expect(seen.withLock { $0 } == [2, 3, 4, 5])
        loop.stop()
    }

    @Test func aHealthySystemNeverMeetsItsBudget() {
        let reports = Reports()
        let loop = Loop<Int, Int>(
            initial: 0,
            reduce: { $0 += $1 },
            feedbacks: [.steps { state, _, sink in if state < 50 { sink.send(1) } }],
            budget: EffectBudget(eventsPerSecond: 100, burst: 100, runawayAfter: .seconds(1)),
            supervisor: reports
        )
        #expect(loop.state == 50)
        #expect(reports.throttled.withLock { $0 }.isEmpty)
        #expect(!loop.feedbacksAreStopped)
        loop.stop()
    }

    @Test func clientEventsAreNeverCounted() {
        let reports = Reports()
        let loop = Loop<Int, Int>(
            initial: 0,
            reduce: { $0 += $1 },
            budget: EffectBudget(eventsPerSecond: 1, burst: 1, runawayAfter: .zero),
            supervisor: reports
        )
        for _ in 0..<1_000 { loop.send(1) }
        loop.send(contentsOf: Array(repeating: 1, count: 100)) { _ in }
        #expect(loop.state == 1_100)
        #expect(reports.throttled.withLock { $0 }.isEmpty)
        loop.stop()
    }

    @Test func aFloodThatOutrunsItsThrottleIsDroppedNotQueuedWithoutBound() async {
        let reports = Reports()
        let budget = EffectBudget(eventsPerSecond: 1_000, burst: 50, runawayAfter: .seconds(60))
        let loop = Loop<Int, Int>(
            initial: 0,
            reduce: { $0 += $1 },
            feedbacks: [
                // One effect that sends 10,000 events without waiting for any of them to be reduced.
                .react(
                    request: { _ in 0 },
                    effects: { _ in
                        AsyncStream<Int> { continuation in
                            for _ in 0..<10_000 { continuation.yield(1) }
                            continuation.finish()
                        }
                    }
                ).named("flood")
            ],
            budget: budget,
            supervisor: reports
        )
        // Every event is either reduced or dropped; what came while a burst already waited was dropped, not queued.
        for await state in loop.states where state + loop.droppedFeedbackEvents == 10_000 { break }
        #expect(loop.droppedFeedbackEvents > 0)
        #expect(loop.state + loop.droppedFeedbackEvents == 10_000)
        loop.stop()
    }
}
