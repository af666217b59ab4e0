import Dispatch
import FeedbackLoop
import Synchronization
import Testing

/// `send(contentsOf:ifRevision:completion:)`: compare the revision and queue in one step.
@Suite(.timeLimit(.minutes(1)))
struct ConditionalSendTests {
    @Test func eventsAreAppliedOnlyAtTheNamedRevision() {
        let loop = Loop<Int, Int>(initial: 0, reduce: { $0 += $1 })
        loop.send(1)
        let seen = Mutex<Step<Int, Int>?>(nil)
        #expect(!loop.send(contentsOf: [10], ifRevision: 0) { step in seen.withLock { $0 = step } })
        #expect(loop.state == 1)
        #expect(loop.send(contentsOf: [10, 100], ifRevision: 1) { step in seen.withLock { $0 = step } })
        #expect(loop.state == 111)
        #expect(seen.withLock { $0?.revision } == 3)
    }

    @Test func anEmptyBatchAtTheRevisionGetsTheCurrentStep() {
        let loop = Loop<Int, Int>(initial: 5, reduce: { $0 += $1 })
        let seen = Mutex<Step<Int, Int>?>(nil)
        #expect(loop.send(contentsOf: [], ifRevision: 0) { step in seen.withLock { $0 = step } })
        #expect(seen.withLock { $0?.state } == 5)
    }

    @Test func aStoppedLoopCompletesWithNil() {
        let loop = Loop<Int, Int>(initial: 0, reduce: { $0 += $1 })
        loop.stop()
        let completed = Mutex<Bool?>(nil)
        #expect(loop.send(contentsOf: [1], ifRevision: 0) { step in completed.withLock { $0 = step == nil } })
        #expect(completed.withLock { $0 } == true)
    }

    @Test func ofManyRacingWritersAtOneRevisionExactlyOneWins() async {
        // Each round, 8 threads try to add at the same revision; exactly one may succeed, as with If-Match.
        let loop = Loop<Int, Int>(initial: 0, reduce: { $0 += $1 })
        for round in 0..<50 {
            let revision = loop.revision
            let wins = Atomic<Int>(0)
            await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
                DispatchQueue.global().async {
                    DispatchQueue.concurrentPerform(iterations: 8) { _ in
                        if loop.send(contentsOf: [1], ifRevision: revision, completion: { _ in }) {
                            wins.add(1, ordering: .relaxed)
                        }
                    }
                    done.resume()
                }
            }
            #expect(wins.load(ordering: .relaxed) == 1, "round \(round)")
        }
        #expect(loop.state == 50)
    }

    @Test func eventsWaitingInTheQueueMakeTheRevisionStale() async {
        // While a completion (running on the thread running the queue) holds the engine, an event queued behind it means
        // the loop will not be at this revision when a conditional batch would run.
        let loop = Loop<Int, Int>(initial: 0, reduce: { $0 += $1 })
        let outcome = Mutex<Bool?>(nil)
        loop.send(contentsOf: [1]) { _ in
            loop.send(2)  // queued: this thread runs the queue
            outcome.withLock { $0 = loop.send(contentsOf: [100], ifRevision: 1) { _ in } }
        }
        #expect(outcome.withLock { $0 } == false)
        #expect(loop.state == 3)
    }
}
