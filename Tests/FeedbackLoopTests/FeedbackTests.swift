import FeedbackLoop
import Synchronization
import Testing

@Suite(.timeLimit(.minutes(1)))
struct FeedbackTests {
    @Test func reactToRequestStartsOneEffectWhileTheRequestStaysEqual() async {
        let starts = Recorder<Int>()
        let feedback = Feedback<TestState, TestEvent>.react(
            request: { $0.request },
            effect: { request in
                starts.append(request)
                return .loaded(request)
            }
        )
        let loop = Loop(initial: TestState(), reduce: reduceTest, feedbacks: [feedback])
        loop.send(.setRequest(3))
        await firstState(of: loop) { $0.loaded == [3] }
        loop.send(.add(1))
        loop.send(.setRequest(3))
        loop.send(.marker)
        #expect(starts.all == [3])
    }

    @Test func reactToRequestCancelsAndRestartsOnADifferentRequest() async {
        let cancelled = Recorder<Int>()
        let feedback = Feedback<TestState, TestEvent>.react(
            request: { $0.request },
            effect: { request in
                if request == 1 {
                    await runUntilCancelled { cancelled.append(request) }
                    return nil
                }
                return .loaded(request)
            }
        )
        let loop = Loop(initial: TestState(), reduce: reduceTest, feedbacks: [feedback])
        loop.send(.setRequest(1))
        loop.send(.setRequest(2))
        let state = await firstState(of: loop) { !$0.loaded.isEmpty }
        #expect(state?.loaded == [2])
        #expect(cancelled.all == [1])
    }

    @Test func reactToRequestCancelsWhenTheRequestBecomesNil() async {
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
        loop.send(.setRequest(nil))
        await cancelled.wait()
        #expect(cancelled.isOpen)
    }

    @Test func reactToRequestWithAnAsyncSequenceDeliversEveryEvent() async {
        let feedback = Feedback<TestState, TestEvent>.react(
            request: { $0.request },
            effects: { request in
                AsyncStream<TestEvent> { continuation in
                    for value in 1...3 { continuation.yield(.loaded(request * value)) }
                    continuation.finish()
                }
            }
        )
        let loop = Loop(initial: TestState(), reduce: reduceTest, feedbacks: [feedback])
        loop.send(.setRequest(10))
        let state = await firstState(of: loop) { $0.loaded.count == 3 }
        #expect(state?.loaded == [10, 20, 30])
    }

    /// A state with keyed requests: download id -> wanted quality.
    struct Downloads: Sendable, Equatable {
        var wanted: [String: Int] = [:]
        var log: [String] = []
    }

    enum DownloadEvent: Sendable {
        case want(String, Int?)
        case progress(String)
    }

    static func reduceDownloads(_ state: inout Downloads, _ event: DownloadEvent) {
        switch event {
        case .want(let id, let quality): state.wanted[id] = quality
        case .progress(let line): state.log.append(line)
        }
    }

    @Test func keyedReactStartsOncePerIDPushesNewValuesAndCancelsVanishedIDs() async {
        let starts = Recorder<String>()
        let cancelled = Recorder<String>()
        let feedback = Feedback<Downloads, DownloadEvent>.react(
            requests: { $0.wanted },
            effects: { initial, updates in
                AsyncStream<DownloadEvent> { continuation in
                    let task = Task {
                        starts.append("start \(initial)")
                        continuation.yield(.progress("got \(initial)"))
                        for await update in updates { continuation.yield(.progress("got \(update)")) }
                        cancelled.append("ended \(initial)")
                        continuation.finish()
                    }
                    continuation.onTermination = { _ in task.cancel() }
                }
            }
        )
        let loop = Loop(initial: Downloads(), reduce: Self.reduceDownloads, feedbacks: [feedback])
        loop.send(.want("a", 1))
        await firstState(of: loop) { $0.log == ["got 1"] }
        loop.send(.want("a", 1))
        loop.send(.want("a", 2))
        await firstState(of: loop) { $0.log == ["got 1", "got 2"] }
        loop.send(.want("a", nil))
        #expect(starts.all == ["start 1"])
        while cancelled.count == 0 { await Task.yield() }
        #expect(cancelled.all == ["ended 1"])
    }

    @Test func keyedReactDropsEventsOfAnIDThatDisappeared() async {
        let release = Gate()
        let delivered = Gate()
        let feedback = Feedback<Downloads, DownloadEvent>.react(
            requests: { $0.wanted },
            effects: { initial, _ in
                SignallingSequence(
                    events: [DownloadEvent.progress("late \(initial)")],
                    delivered: delivered,
                    release: release
                )
            }
        )
        let loop = Loop(initial: Downloads(), reduce: Self.reduceDownloads, feedbacks: [feedback])
        loop.send(.want("a", 1))
        loop.send(.want("a", nil))
        release.open()
        await delivered.wait()
        loop.send(.progress("marker"))
        let state = await firstState(of: loop) { $0.log.contains("marker") }
        #expect(state?.log == ["marker"])
    }

    @Test func setReactRunsOneEffectPerElementAndCancelsRemovedOnes() async {
        let cancelled = Recorder<Int>()
        let feedback = Feedback<Set<Int>, Int>.react(
            requests: { $0 },
            effect: { element in
                if element < 0 { return nil }
                await runUntilCancelled { cancelled.append(element) }
                return nil
            }
        )
        let starts = Recorder<Int>()
        let counter = Feedback<Set<Int>, Int>.react(
            requests: { $0 },
            effect: { element in
                starts.append(element)
                return nil
            }
        )
        let loop = Loop<Set<Int>, Int>(
            initial: [],
            reduce: { state, element in
                if state.contains(element) { state.remove(element) } else { state.insert(element) }
            },
            feedbacks: [feedback, counter]
        )
        loop.send(1)
        loop.send(2)
        loop.send(1)
        while cancelled.count == 0 || starts.count < 2 { await Task.yield() }
        #expect(cancelled.all == [1])
        #expect(starts.all.sorted() == [1, 2])
    }

    @Test func whenBecomesTrueStartsOnlyOnTheFalseToTrueTransition() async {
        let starts = Recorder<Int>()
        let feedback = Feedback<TestState, TestEvent>.whenBecomesTrue(
            { $0.count > 0 },
            effect: { state in
                starts.append(state.count)
                return nil
            }
        )
        let loop = Loop(initial: TestState(), reduce: reduceTest, feedbacks: [feedback])
        loop.send(.add(1))
        loop.send(.add(1))
        loop.send(.add(-2))
        loop.send(.add(5))
        while starts.count < 2 { await Task.yield() }
        #expect(starts.all.sorted() == [1, 5])
    }

    @Test func whenBecomesTrueCancelsItsEffectWhenThePredicateTurnsFalse() async {
        let started = Gate()
        let cancelled = Gate()
        let feedback = Feedback<TestState, TestEvent>.whenBecomesTrue(
            { $0.count > 0 },
            effect: { _ in
                await runUntilCancelled(started: started) { cancelled.open() }
                return nil
            }
        )
        let loop = Loop(initial: TestState(), reduce: reduceTest, feedbacks: [feedback])
        loop.send(.add(1))
        await started.wait()
        loop.send(.add(-1))
        await cancelled.wait()
        #expect(cancelled.isOpen)
    }

    @Test func firstValueAfterNilStartsWithTheFirstValueAndIgnoresLaterValues() async {
        let feedback = Feedback<TestState, TestEvent>.firstValueAfterNil(
            { $0.request },
            effect: { value in
                .loaded(value)
            }
        )
        let loop = Loop(initial: TestState(), reduce: reduceTest, feedbacks: [feedback])
        loop.send(.setRequest(4))
        await firstState(of: loop) { $0.loaded == [4] }
        loop.send(.setRequest(5))
        loop.send(.setRequest(nil))
        loop.send(.setRequest(6))
        let state = await firstState(of: loop) { $0.loaded.count == 2 }
        #expect(state?.loaded == [4, 6])
    }

    @Test func middlewareSeesEveryReducedEventWithTheNewStateAndCanSend() {
        let seen = Recorder<String>()
        let feedback = Feedback<TestState, TestEvent>.middleware { state, event, sink in
            seen.append("\(event) -> \(state.count)")
            if event == .add(1) { sink.send(.marker) }
        }
        let loop = Loop(initial: TestState(), reduce: reduceTest, feedbacks: [feedback])
        loop.send(.add(1))
        #expect(seen.all == ["add(1) -> 1", "marker -> 1"])
        #expect(loop.state.markers == 1)
    }

    @Test func customFeedbackReceivesTheRawStateStream() async {
        // Loads each request once: a feedback that emitted for every state with a request would feed itself forever
        // (its reactions to a state are reduced in the same run of the queue, so `send` would never return).
        let feedback = Feedback<TestState, TestEvent>.custom { states in
            states.compactMap { state -> TestEvent? in
                state.request.flatMap { state.loaded.contains($0) ? nil : .loaded($0) }
            }
        }
        let loop = Loop(initial: TestState(), reduce: reduceTest, feedbacks: [feedback])
        loop.send(.setRequest(8))
        let state = await firstState(of: loop) { $0.loaded.contains(8) }
        #expect(state?.loaded.first == 8)
        loop.stop()
    }

    @Test func inputFeedbackForwardsAnExternalSource() async {
        let (source, continuation) = AsyncStream.makeStream(of: TestEvent.self)
        let loop = Loop(initial: TestState(), reduce: reduceTest, feedbacks: [.input(from: source)])
        continuation.yield(.add(2))
        continuation.yield(.add(3))
        let state = await firstState(of: loop) { $0.count == 5 }
        #expect(state?.count == 5)
        continuation.finish()
    }
}
