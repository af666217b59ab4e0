import FeedbackLoop
import Synchronization
import Testing

/// Bounded synchronous work (issue 31): feedbacks that answer every state without suspending never hold the thread
/// that started or sent to the loop. The anchors' scenarios, each run 1,000 times: Loop's "effect on every state"
/// (`test_reducer_with_one_feedback_loop`: a feedback that emits for every state, the states taken until the test has
/// enough) and "two alternating immediate feedbacks" (`test_reduce_with_two_immediate_feedback_loops`, CombineFeedback's
/// alternating pair). Before, `Loop.init` ran such a system forever on the calling thread.
@Suite(.timeLimit(.minutes(2)))
struct RunawayTests {
    static let repetitions = 1000

    /// States seen by a feedback, in order; wakes a waiter once it holds `count` of them.
    final class StateLog<State: Sendable>: Sendable {
        private struct Held {
            var states: [State] = []
            var waiter: CheckedContinuation<Void, Never>?
            var wanted = Int.max
        }
        private let held = Mutex(Held())

        func append(_ state: State) {
            let waiter = held.withLock { held -> CheckedContinuation<Void, Never>? in
                held.states.append(state)
                guard held.states.count >= held.wanted, let waiter = held.waiter else { return nil }
                held.waiter = nil
                return waiter
            }
            waiter?.resume()
        }

        /// Returns once `count` states were seen.
        func wait(for count: Int) async {
            await withCheckedContinuation { continuation in
                let ready = held.withLock { held -> Bool in
                    if held.states.count >= count { return true }
                    held.wanted = count
                    held.waiter = continuation
                    return false
                }
                if ready { continuation.resume() }
            }
        }

        var states: [State] { held.withLock { $0.states } }
    }

    /// A loop that a finished observation reports stopped.
    static func stopAndWait<State: Sendable, Event: Sendable>(_ loop: Loop<State, Event>) async {
        loop.stop()
        let finished = loop.states
        for await _ in finished {}
    }

    @Test func anEffectOnEveryStateReturnsFromInitAndStopsAfterFourStates() async {
        for _ in 0..<Self.repetitions {
            let log = StateLog<Int>()
            let loop = Loop<Int, Int>(
                initial: 0,
                reduce: { $0 += $1 },
                feedbacks: [
                    .react(
                        request: { state -> Int? in
                            log.append(state)
                            return state
                        },
                        effect: { _ in 1 }
                    )
                ]
            )
            // init returned although the feedback never stops answering; the rest runs in a task.
            await log.wait(for: 4)
            await Self.stopAndWait(loop)
            let states = log.states
            #expect(Array(states.prefix(4)) == [0, 1, 2, 3])
            // Every state once, in order: nothing reduced twice, nothing skipped across the hand-over to the task.
            #expect(states == Array(0..<states.count))
            #expect(loop.isStopped)
        }
    }

    @Test func twoAlternatingImmediateFeedbacksReturnFromInitAndStopAfterFourStates() async {
        for _ in 0..<Self.repetitions {
            let log = StateLog<String>()
            let loop = Loop<String, String>(
                initial: "initial",
                reduce: { $0 += $1 },
                feedbacks: [
                    .react(
                        request: { state -> String? in
                            log.append(state)
                            return state.hasSuffix("_a") ? nil : state
                        },
                        effect: { _ in "_a" }
                    ),
                    .react(
                        request: { state -> String? in state.hasSuffix("_a") ? state : nil },
                        effect: { _ in "_b" }
                    ),
                ]
            )
            await log.wait(for: 4)
            await Self.stopAndWait(loop)
            #expect(Array(log.states.prefix(4)) == ["initial", "initial_a", "initial_a_b", "initial_a_b_a"])
        }
    }

    @Test func aSendToARunawayLoopReturnsAndIsReducedInOrder() async {
        let seen = StateLog<Int>()
        let loop = Loop<Int, Int>(
            initial: 0,
            reduce: { $0 += $1 },
            feedbacks: [
                .steps { state, event, sink in
                    if event == 1_000_000 { seen.append(state) }
                    if state < 1_000_000 { sink.send(1) }
                }
            ],
            synchronousSteps: 8
        )
        // The feedback answers every state; this send returns and its event is reduced after those already queued.
        loop.send(1_000_000)
        await seen.wait(for: 1)
        await Self.stopAndWait(loop)
        #expect(seen.states.count == 1)
    }

    @Test func oneCallRunsAtMostItsShareOfSteps() async {
        let reduced = Atomic<Int>(0)
        let loop = Loop<Int, Int>(
            initial: 0,
            reduce: { state, event in
                reduced.add(1, ordering: .relaxed)
                state += event
            },
            feedbacks: [.steps { state, _, sink in if state < 100 { sink.send(1) } }],
            synchronousSteps: 10
        )
        // init reduced at most its share on this thread; the task brings the state to 100.
        #expect(reduced.load(ordering: .relaxed) <= 10)
        for await state in loop.states where state == 100 { break }
        #expect(loop.state == 100)
        loop.stop()
    }

    @Test func aHealthySystemStillRunsWholeInsideInit() {
        // Far below the default share: the chain of 18 steps runs on this thread, as before.
        let loop = Loop<Int, Int>(
            initial: 0,
            reduce: { $0 += $1 },
            feedbacks: [.steps { state, _, sink in if state < 18 { sink.send(1) } }]
        )
        #expect(loop.state == 18)
        loop.stop()
    }
}
