import FeedbackLoop
import Testing

@Suite(.timeLimit(.minutes(1)))
struct LoopConcurrencyTests {
    @Test func stopWhileOtherThreadsSendEndsCleanlyAndIgnoresLaterEvents() async {
        let loop = Loop<Int, Int>(initial: 0, reduce: { $0 += $1 })
        let finished = Gate()
        let states = loop.states
        let reader = Task {
            for await _ in states {}
            finished.open()
        }
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<3 {
                group.addTask {
                    for _ in 0..<5000 { loop.send(1) }
                }
            }
            group.addTask { loop.stop() }
        }
        await finished.wait()
        let stoppedAt = loop.state
        loop.send(1)
        #expect(loop.isStopped)
        #expect(loop.state == stoppedAt)
        #expect(loop.revision == UInt64(stoppedAt))
        reader.cancel()
    }

    @Test func effectsAndExternalSendersInterleaveWithoutLosingExternalEvents() async {
        let feedback = Feedback<TestState, TestEvent>.react(
            request: { $0.count % 10 == 0 ? $0.count : nil },
            effect: { _ in .marker }
        )
        let loop = Loop(initial: TestState(), reduce: reduceTest, feedbacks: [feedback])
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<2 {
                group.addTask {
                    for _ in 0..<3000 { loop.send(.add(1)) }
                }
            }
        }
        // An effect's task may be the one running the queue when the senders return; every external event still arrives.
        let state = await firstState(of: loop) { $0.count == 6000 }
        #expect(state?.count == 6000)
    }

    @Test func stepsStreamCarriesEventAndRevision() async {
        let loop = Loop(initial: TestState(), reduce: reduceTest)
        var iterator = loop.steps.makeAsyncIterator()
        let initial = await iterator.next()
        loop.send(.add(2))
        let next = await iterator.next()
        #expect(initial?.revision == 0)
        #expect(initial?.event == nil)
        #expect(next?.revision == 1)
        #expect(next?.event == .add(2))
        #expect(next?.state.count == 2)
    }
}
