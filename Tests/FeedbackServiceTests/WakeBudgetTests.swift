import Testing

@testable import FeedbackService

/// The timer waker's token bucket, on explicit times (no clock).
@Suite struct WakeBudgetTests {
    private let second: UInt64 = 1_000_000_000

    @Test func aBurstTakesOneSecondsWorthThenTheRateRefillsIt() {
        var budget = WakeBudget(rate: 100, now: 0)
        let burst = (0..<1000).filter { _ in budget.take(now: 0) }.count
        #expect(burst == 100)
        let wait = budget.wait(now: 0)
        #expect(wait == second / 100 + 1)
        let halfToken = budget.take(now: second / 200)
        #expect(!halfToken)
        let wholeToken = budget.take(now: second / 100 + 1)
        #expect(wholeToken)
        // A long pause refills no more than a second's worth.
        let later = (0..<1000).filter { _ in budget.take(now: 60 * second) }.count
        #expect(later == 100)
    }

    /// `reserve` always gives a turn, one after another at the rate once the burst is spent: what an activated
    /// session's first upstream fetch waits (`ActivationThrottle`).
    @Test func reservationsQueueAtTheRateOnceTheBurstIsSpent() {
        var budget = WakeBudget(rate: 10, now: 0)
        let burst = (0..<10).map { _ in budget.reserve(now: 0) }
        #expect(burst.allSatisfy { $0 == 0 })
        let queued = (0..<3).map { _ in budget.reserve(now: 0) }
        #expect(queued.map { ($0 + second / 200) / (second / 10) } == [1, 2, 3])
        // A turn taken 0.1 s on comes after the three queued (at 0.1, 0.2, 0.3 s): 0.3 s after it was taken.
        let later = budget.reserve(now: second / 10)
        #expect((later + second / 200) / (second / 100) == 30)
        var unbounded = WakeBudget(rate: 0, now: 0)
        #expect((0..<100).allSatisfy { _ in unbounded.reserve(now: 0) == 0 })
    }

    @Test func zeroMeansNoBound() {
        var budget = WakeBudget(rate: 0, now: 0)
        let taken = (0..<10_000).filter { _ in budget.take(now: 0) }.count
        #expect(taken == 10_000)
        let wait = budget.wait(now: 0)
        #expect(wait == 0)
    }
}
