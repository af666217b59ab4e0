import FeedbackLoop
import Testing

@Suite(.timeLimit(.minutes(1)))
struct ObservationTests {
    @Test func batchCompletionGetsTheStateAndRevisionRightAfterItsLastEvent() {
        let loop = Loop(initial: TestState(), reduce: reduceTest)
        let result = Box<Step<TestState, TestEvent>?>(nil)
        loop.send(contentsOf: [.add(1), .add(2), .add(3)]) { result.value = $0 }
        #expect(result.value?.state.count == 6)
        #expect(result.value?.revision == 3)
        #expect(result.value?.event == .add(3))
    }

    @Test func batchSentFromAnObserverCompletesAfterTheCurrentStep() {
        let loop = Loop(initial: TestState(), reduce: reduceTest)
        let result = Box<UInt64?>(nil)
        let log = Recorder<String>()
        loop.observe { [weak loop] step in
            guard let loop, step.event == .marker else { return }
            loop.send(contentsOf: [.add(1), .add(1)]) { result.value = $0?.revision }
            log.append("returned with \(String(describing: result.value))")
        }
        loop.send(.marker)
        #expect(log.all == ["returned with nil"])
        #expect(result.value == 3)
    }

    @Test func asyncBatchReturnsTheStepAfterItsEvents() async {
        let loop = Loop(initial: TestState(), reduce: reduceTest)
        let step = await loop.send(contentsOf: [TestEvent.add(4), .marker])
        #expect(step?.state.count == 4)
        #expect(step?.state.markers == 1)
        #expect(step?.revision == 2)
    }

    @Test func batchOnAStoppedLoopCompletesWithNil() async {
        let loop = Loop(initial: TestState(), reduce: reduceTest)
        loop.stop()
        let step = await loop.send(contentsOf: [TestEvent.add(4)])
        #expect(step == nil)
    }

    @Test func emptyBatchCompletesWithTheCurrentStep() async {
        let loop = Loop(initial: TestState(), reduce: reduceTest)
        loop.send(.add(2))
        let step = await loop.send(contentsOf: [TestEvent]())
        #expect(step?.revision == 1)
        #expect(step?.state.count == 2)
    }

    @Test func stepObserverGetsTheCurrentStepThenEveryStepInOrder() {
        let loop = Loop(initial: TestState(), reduce: reduceTest)
        loop.send(.add(1))
        let steps = Recorder<String>()
        loop.observe { steps.append("\($0.revision) \(String(describing: $0.event)) \($0.state.count)") }
        loop.send(.add(2))
        loop.send(.noop)
        #expect(
            steps.all == [
                "1 nil 1", "2 Optional(FeedbackLoopTests.TestEvent.add(2)) 3",
                "3 Optional(FeedbackLoopTests.TestEvent.noop) 3",
            ]
        )
    }

    @Test func cancelledObservationGetsNoMoreSteps() {
        let loop = Loop(initial: TestState(), reduce: reduceTest)
        let steps = Recorder<UInt64>()
        let observation = loop.observe { steps.append($0.revision) }
        loop.send(.noop)
        observation.cancel()
        loop.send(.noop)
        #expect(steps.all == [0, 1])
    }

    @Test func stateSubscriberFirstGetsTheCurrentState() async {
        let loop = Loop(initial: TestState(), reduce: reduceTest)
        loop.send(.add(9))
        var iterator = loop.states.makeAsyncIterator()
        let first = await iterator.next()
        #expect(first?.count == 9)
    }

    @Test func slowSubscriberGetsOnlyTheLatestState() async {
        let loop = Loop<Int, Int>(initial: 0, reduce: { $0 += $1 })
        var iterator = loop.states.makeAsyncIterator()
        for _ in 0..<1000 { loop.send(1) }
        let next = await iterator.next()
        #expect(next == 1000)
    }

    @Test func selectorDeliversThePartOnlyWhenItChanges() async {
        let loop = Loop(initial: TestState(), reduce: reduceTest)
        let values = Recorder<Int>()
        let done = Gate()
        let selected = loop.select { $0.markers }
        let reader = Task {
            for await value in selected {
                values.append(value)
                if value == 2 { done.open() }
            }
        }
        loop.send(.add(1))
        // Wait for each value so conflation cannot hide a duplicate.
        while values.count < 1 { await Task.yield() }
        loop.send(.marker)
        while values.count < 2 { await Task.yield() }
        loop.send(.add(1))
        loop.send(.noop)
        loop.send(.marker)
        await done.wait()
        reader.cancel()
        #expect(values.all == [0, 1, 2])
    }

    @Test func observerOfAStoppedLoopGetsTheLastStepAndEnds() async {
        let loop = Loop(initial: TestState(), reduce: reduceTest)
        loop.send(.add(3))
        loop.stop()
        var all: [Int] = []
        for await state in loop.states { all.append(state.count) }
        #expect(all == [3])
    }
}
