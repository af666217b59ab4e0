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

    @Test func zeroMeansNoBound() {
        var budget = WakeBudget(rate: 0, now: 0)
        let taken = (0..<10_000).filter { _ in budget.take(now: 0) }.count
        #expect(taken == 10_000)
        let wait = budget.wait(now: 0)
        #expect(wait == 0)
    }
}
