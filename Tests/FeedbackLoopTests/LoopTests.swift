import FeedbackLoop
import Foundation
import Synchronization
import Testing

@Suite(.timeLimit(.minutes(1)))
struct LoopTests {
    /// A feedback that records every state it sees (through its request closure) under `name`.
    func recording(_ name: String, into log: Recorder<String>) -> Feedback<TestState, TestEvent> {
        .react(
            request: { state -> Int? in
                log.append("\(name) \(state.count)")
                return nil
            },
            effect: { _ in nil }
        )
    }

    @Test func initialStateReachesEveryFeedbackInOrderBeforeAnyEventIsReduced() {
        let log = Recorder<String>()
        let loop = Loop<TestState, TestEvent>(
            initial: TestState(),
            reduce: { state, event in
                log.append("reduce")
                reduceTest(&state, event)
            },
            feedbacks: [recording("A", into: log), recording("B", into: log)]
        )
        #expect(log.all == ["A 0", "B 0"])
        loop.send(.add(1))
        #expect(log.all == ["A 0", "B 0", "reduce", "A 1", "B 1"])
    }

    @Test func eventsAreReducedOneAtATimeInFIFOOrder() {
        let loop = Loop<[Int], Int>(initial: [], reduce: { $0.append($1) })
        for value in 0..<1000 { loop.send(value) }
        #expect(loop.state == Array(0..<1000))
    }

    @Test func externalEventsFromManyThreadsAreNeverDroppedAndKeepEachSendersOrder() async {
        let loop = Loop<[Int], Int>(initial: [], reduce: { $0.append($1) })
        await withTaskGroup(of: Void.self) { group in
            for sender in 0..<4 {
                group.addTask {
                    for index in 0..<2000 { loop.send(sender * 10_000 + index) }
                }
            }
        }
        // A sender that owned the engine ran its share of what the others queued; a task may still run the rest.
        for await state in loop.states where state.count == 8000 { break }
        let state = loop.state
        #expect(state.count == 8000)
        for sender in 0..<4 {
            let mine = state.filter { $0 / 10_000 == sender }
            #expect(mine == (0..<2000).map { sender * 10_000 + $0 })
        }
        #expect(loop.revision == 8000)
    }

    @Test func eventSentFromFeedbackIsQueuedNotReducedInsideTheCurrentStep() {
        let log = Recorder<String>()
        let box = Box<Loop<TestState, TestEvent>?>(nil)
        let follow = Feedback<TestState, TestEvent>.middleware { state, event, sink in
            guard event == .add(1) else { return }
            sink.send(.add(10))
            // Still the step of .add(1): the follow-up was only queued.
            log.append("after send: count \(state.count), loop \(box.value?.state.count ?? -1)")
        }
        let loop = Loop(initial: TestState(), reduce: reduceTest, feedbacks: [follow])
        box.value = loop
        loop.send(.add(1))
        #expect(log.all == ["after send: count 1, loop 1"])
        #expect(loop.state.count == 11)
        #expect(loop.revision == 2)
    }

    @Test func eventSentFromObserverIsQueuedAndObserverMayReadTheLoop() {
        let log = Recorder<String>()
        let loop = Loop(initial: TestState(), reduce: reduceTest)
        loop.observe { [weak loop] step in
            guard let loop, step.event == .add(1) else { return }
            loop.send(.add(100))
            log.append("inside step \(step.revision): loop at \(loop.revision)")
        }
        loop.send(.add(1))
        #expect(log.all == ["inside step 1: loop at 1"])
        #expect(loop.state.count == 101)
    }

    @Test func everyStateReachesEveryFeedbackWithItsEventBeforeTheNextEvent() {
        let log = Recorder<String>()
        func watcher(_ name: String) -> Feedback<TestState, TestEvent> {
            .middleware { state, event, _ in log.append("\(name) \(event) \(state.count)") }
        }
        let loop = Loop(initial: TestState(), reduce: reduceTest, feedbacks: [watcher("A"), watcher("B")])
        loop.send(contentsOf: [.add(1), .add(2)]) { _ in }
        #expect(log.all == ["A add(1) 1", "B add(1) 1", "A add(2) 3", "B add(2) 3"])
    }

    @Test func everyReduceEmitsAStateEvenAnUnchangedOne() {
        let steps = Recorder<UInt64>()
        let loop = Loop(initial: TestState(), reduce: reduceTest)
        loop.observe { steps.append($0.revision) }
        loop.send(.noop)
        loop.send(.noop)
        loop.send(.noop)
        #expect(steps.all == [0, 1, 2, 3])
        #expect(loop.state == TestState())
    }

    @Test func revisionGrowsByOnePerReduceFromZero() {
        let loop = Loop(initial: TestState(), reduce: reduceTest)
        #expect(loop.revision == 0)
        loop.send(.noop)
        loop.send(contentsOf: [.noop, .noop, .noop]) { _ in }
        #expect(loop.revision == 4)
        #expect(loop.currentStep.revision == 4)
    }

    @Test func hundredThousandSynchronousChainedEventsDoNotOverflowTheStack() async {
        let chain = Feedback<TestState, TestEvent>.middleware { state, _, sink in
            if state.count < 100_000 { sink.send(.add(1)) }
        }
        let loop = Loop(initial: TestState(), reduce: reduceTest, feedbacks: [chain])
        loop.send(.add(1))
        // The send ran its share of the chain; the rest went on in tasks, each its share, none of them recursive.
        #expect(loop.revision <= UInt64(Loop<TestState, TestEvent>.defaultSynchronousSteps) + 1)
        for await state in loop.states where state.count == 100_000 { break }
        #expect(loop.state.count == 100_000)
        #expect(loop.revision == 100_000)
    }

    @Test func effectThatReadsAndSendsToItsOwnLoopDoesNotDeadlock() async {
        let box = Box<Loop<TestState, TestEvent>?>(nil)
        let feedback = Feedback<TestState, TestEvent>.react(
            request: { $0.request },
            effect: { request in
                guard let loop = box.value else { return nil }
                let seen = loop.state.request ?? -1
                loop.send(.add(seen))
                return .loaded(request)
            }
        )
        let loop = Loop(initial: TestState(), reduce: reduceTest, feedbacks: [feedback])
        box.value = loop
        loop.send(.setRequest(7))
        let state = await firstState(of: loop) { $0.loaded == [7] }
        #expect(state?.count == 7)
    }

    @Test func stopCancelsRunningEffectsAndIgnoresLaterSends() async {
        let cancelled = Gate()
        let started = Gate()
        let feedback = Feedback<TestState, TestEvent>.react(
            request: { $0.request },
            effect: { _ in
                await runUntilCancelled(started: started) { cancelled.open() }
                return nil
            }
        )
        let loop = Loop(initial: TestState(), reduce: reduceTest, feedbacks: [feedback])
        loop.send(.setRequest(1))
        await started.wait()
        loop.stop()
        await cancelled.wait()
        loop.send(.add(5))
        #expect(loop.isStopped)
        #expect(loop.state.count == 0)
        #expect(loop.revision == 1)
    }

    @Test func releasingTheLoopStopsItAndCancelsItsEffects() async {
        let cancelled = Gate()
        let started = Gate()
        let feedback = Feedback<TestState, TestEvent>.react(
            request: { $0.request },
            effect: { _ in
                await runUntilCancelled(started: started) { cancelled.open() }
                return nil
            }
        )
        do {
            let loop = Loop(initial: TestState(), reduce: reduceTest, feedbacks: [feedback])
            loop.send(.setRequest(1))
            await started.wait()
        }
        await cancelled.wait()
        #expect(cancelled.isOpen)
    }

    @Test func stopFinishesStateStreams() async {
        let loop = Loop(initial: TestState(), reduce: reduceTest)
        let states = loop.states
        loop.send(.add(1))
        loop.stop()
        var last: TestState?
        for await state in states { last = state }
        #expect(last?.count == 1)
    }

    @Test func stopCalledInsideAFeedbackTakesEffectWhenTheStepEnds() {
        let box = Box<Loop<TestState, TestEvent>?>(nil)
        let stopper = Feedback<TestState, TestEvent>.middleware { state, _, sink in
            guard state.count == 1 else { return }
            sink.send(.add(1))
            box.value?.stop()
        }
        let seen = Recorder<Int>()
        let after = Feedback<TestState, TestEvent>.middleware { state, _, _ in seen.append(state.count) }
        let loop = Loop(initial: TestState(), reduce: reduceTest, feedbacks: [stopper, after])
        box.value = loop
        loop.send(.add(1))
        #expect(seen.all == [1])
        #expect(loop.state.count == 1)
        #expect(loop.isStopped)
    }

    @Test func cancellationIsScopedToOneLoop() async {
        let clock = TestClock()
        let feedback = Feedback<TestState, TestEvent>.react(
            request: { $0.request },
            effect: { request in
                try await clock.sleep(for: .seconds(1))
                return .loaded(request)
            }
        )
        let first = Loop(initial: TestState(), reduce: reduceTest, feedbacks: [feedback])
        let second = Loop(initial: TestState(), reduce: reduceTest, feedbacks: [feedback])
        first.send(.setRequest(1))
        second.send(.setRequest(2))
        await clock.waitForSleepers(count: 2)
        first.stop()
        clock.advance(by: .seconds(1))
        let state = await firstState(of: second) { !$0.loaded.isEmpty }
        #expect(state?.loaded == [2])
        #expect(first.state.loaded.isEmpty)
    }

    @Test func loggingHookSeesEveryEventAndState() {
        let lines = Recorder<String>()
        let loop = Loop<Int, Int>(initial: 0, reduce: { $0 += $1 })
        loop.logSteps { lines.append($0) }
        loop.send(2)
        loop.send(3)
        #expect(lines.all == ["#0 initial -> 0", "#1 2 -> 2", "#2 3 -> 5"])
    }
}
