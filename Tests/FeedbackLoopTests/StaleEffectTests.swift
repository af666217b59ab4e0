import FeedbackLoop
import Testing

/// Events of an effect whose request changed or disappeared are dropped; external events never are.
@Suite(.timeLimit(.minutes(1)))
struct StaleEffectTests {
    /// An effect per request that waits for `release` (ignoring cancellation), emits `.loaded(request)` and
    /// then opens the request's gate in `delivered`: by then the loop accepted or dropped the event.
    func heldEffect(release: Gate, delivered: [Int: Gate]) -> Feedback<TestState, TestEvent> {
        .react(
            request: { $0.request },
            effects: { request in
                SignallingSequence(
                    events: [TestEvent.loaded(request)],
                    delivered: delivered[request] ?? Gate(),
                    release: release
                )
            }
        )
    }

    @Test func eventsOfAnEffectWhoseRequestChangedAreDropped() async {
        let release = Gate()
        let delivered = [1: Gate(), 2: Gate()]
        let loop = Loop(
            initial: TestState(),
            reduce: reduceTest,
            feedbacks: [heldEffect(release: release, delivered: delivered)]
        )
        loop.send(.setRequest(1))
        loop.send(.setRequest(2))
        release.open()
        for gate in delivered.values { await gate.wait() }
        loop.send(.marker)
        let state = await firstState(of: loop) { $0.markers == 1 }
        #expect(state?.loaded == [2])
    }

    @Test func eventsOfAnEffectWhoseRequestDisappearedAreDropped() async {
        let release = Gate()
        let delivered = [1: Gate()]
        let loop = Loop(
            initial: TestState(),
            reduce: reduceTest,
            feedbacks: [heldEffect(release: release, delivered: delivered)]
        )
        loop.send(.setRequest(1))
        loop.send(.setRequest(nil))
        release.open()
        await delivered[1]!.wait()
        loop.send(.marker)
        let state = await firstState(of: loop) { $0.markers == 1 }
        #expect(state?.loaded == [])
    }

    @Test func queuedEventsOfAFinishedEffectAreDroppedWhenItsRequestChanges() async {
        let delivered = Gate()
        let feedback = Feedback<TestState, TestEvent>.react(
            request: { $0.request },
            effects: { request in
                SignallingSequence(events: [TestEvent.loaded(request)], delivered: request == 1 ? delivered : Gate())
            }
        )
        let loop = Loop(initial: TestState(), reduce: reduceTest, feedbacks: [feedback])
        let blocked = Box(false)
        loop.observe { step in
            // While this thread owns the loop (step of .setRequest(1)), let effect 1 finish and queue its event.
            if step.event == .setRequest(1) { blocked.value = delivered.block() }
        }
        await onThread {
            loop.send(contentsOf: [.setRequest(1), .setRequest(nil)]) { _ in }
        }
        #expect(blocked.value)
        loop.send(.marker)
        #expect(loop.state.loaded.isEmpty)
        #expect(loop.state.markers == 1)
    }

    @Test func externalEventsQueuedBehindARequestChangeAreKept() async {
        let loop = Loop(
            initial: TestState(),
            reduce: reduceTest,
            feedbacks: [heldEffect(release: Gate(), delivered: [:])]
        )
        let gate = Gate()
        loop.observe { step in
            if step.event == .setRequest(1) { _ = gate.block() }
        }
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await onThread { loop.send(.setRequest(1)) } }
            group.addTask {
                await onThread {
                    for _ in 0..<100 { loop.send(.add(1)) }
                    gate.open()
                }
            }
        }
        #expect(loop.state.count == 100)
    }

    @Test func effectErrorBecomesAnEventAndTheLoopKeepsRunning() async {
        struct Failure: Error {}
        let feedback = Feedback<TestState, TestEvent>.react(
            request: { $0.request },
            onError: { _ in .failed("boom") },
            effect: { _ in
                throw Failure()
            }
        )
        let loop = Loop(initial: TestState(), reduce: reduceTest, feedbacks: [feedback])
        loop.send(.setRequest(1))
        let state = await firstState(of: loop) { !$0.errors.isEmpty }
        #expect(state?.errors == ["boom"])
        loop.send(.add(1))
        #expect(loop.state.count == 1)
    }

    @Test func effectErrorWithoutMappingIsDroppedAndTheLoopKeepsRunning() async {
        struct Failure: Error {}
        let thrown = Gate()
        let feedback = Feedback<TestState, TestEvent>.react(
            request: { $0.request },
            effect: { _ in
                thrown.open()
                throw Failure()
            }
        )
        let loop = Loop(initial: TestState(), reduce: reduceTest, feedbacks: [feedback])
        loop.send(.setRequest(1))
        await thrown.wait()
        loop.send(.add(2))
        #expect(loop.state.count == 2)
        #expect(!loop.isStopped)
    }
}
