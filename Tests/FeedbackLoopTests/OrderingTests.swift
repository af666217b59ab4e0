import FeedbackLoop
import Testing

/// The anchors' ordering promises (issue 18), each scenario repeated so that an order that depends on thread timing
/// shows: the initial state reaches every feedback first and reactions are reduced breadth-first in feedback order
/// (RxFeedback's `testImmediateFeedbackLoopParallel`), immediate effects deliver in start order (Loop's
/// `test_reduce_with_two_immediate_feedback_loops`), and a feedback can see `(initial, nil)` and then every
/// (state, causing event) pair (Loop's `test_events_of_feedback_emitted_in_correct_order`).
@Suite(.timeLimit(.minutes(1)))
struct OrderingTests {
    static let repetitions = 1000

    /// A raw feedback: for every state shorter than `length` it emits its letter tagged with the state's length.
    static func letter(_ name: String, length: Int) -> Feedback<[String], String> {
        .custom { states in
            states.compactMap { state in state.count < length ? "\(name)\(state.count)" : nil }
        }
    }

    /// The states' order when every state reaches the feedbacks in order and their events queue breadth-first.
    static func breadthFirst(names: [String], length: Int) -> [String] {
        var state: [String] = []
        var queue = names.map { "\($0)0" }
        while !queue.isEmpty {
            state.append(queue.removeFirst())
            if state.count < length { queue += names.map { "\($0)\(state.count)" } }
        }
        return state
    }

    @Test func threeRawFeedbacksReachTheirStatesInOneBreadthFirstOrderEveryTime() {
        let names = ["A", "B", "C"]
        let length = 6
        let expected = Self.breadthFirst(names: names, length: length)
        #expect(expected.prefix(7) == ["A0", "B0", "C0", "A1", "B1", "C1", "A2"])
        var mismatches = 0
        for _ in 0..<Self.repetitions {
            let loop = Loop<[String], String>(
                initial: [],
                reduce: { $0.append($1) },
                feedbacks: names.map { Self.letter($0, length: length) }
            )
            // Each stream task reacts in the step that yields its state: the whole chain ran inside init.
            if loop.state != expected { mismatches += 1 }
            loop.stop()
        }
        #expect(mismatches == 0)
    }

    @Test func everyFeedbackKindSeesTheInitialStateBeforeTheFirstReduce() {
        let length = 3
        for _ in 0..<Self.repetitions {
            let seen = Recorder<String>()
            let loop = Loop<[String], String>(
                initial: [],
                reduce: { state, event in
                    seen.append("reduce \(event)")
                    state.append(event)
                },
                feedbacks: [
                    .custom { states in
                        states.compactMap { state in
                            seen.append("custom \(state.count)")
                            return state.isEmpty ? "custom" : nil
                        }
                    },
                    .react(
                        request: { state -> Int? in
                            seen.append("react \(state.count)")
                            return state.contains("react") ? nil : 0
                        },
                        effect: { _ in "react" }
                    ),
                    .steps { state, _, sink in
                        seen.append("steps \(state.count)")
                        if state.isEmpty { sink.send("steps") }
                    },
                ]
            )
            let log = seen.all
            let firstReduce = log.firstIndex { $0.hasPrefix("reduce") } ?? log.count
            #expect(Set(log[..<firstReduce]) == ["custom 0", "react 0", "steps 0"])
            #expect(loop.state == ["custom", "react", "steps"])
            #expect(loop.state.count == length)
            loop.stop()
        }
    }

    /// A state that starts effects of every kind at once; each effect emits its name without suspending.
    struct Launch: Sendable, Equatable {
        var started = false
        var log: [String] = []
    }

    enum LaunchEvent: Sendable, Equatable {
        case start
        case done(String)
    }

    static func reduceLaunch(_ state: inout Launch, _ event: LaunchEvent) {
        switch event {
        case .start: state.started = true
        case .done(let name): state.log.append(name)
        }
    }

    static var launchFeedbacks: [Feedback<Launch, LaunchEvent>] {
        [
            .react(request: { $0.started ? 1 : nil }, effect: { _ in .done("request") }),
            .react(requests: { $0.started ? [1] : [] }, effect: { _ in .done("set") }),
            .react(
                requests: { $0.started ? ["id": 1] : [:] },
                effects: { _, _ in
                    AsyncStream<LaunchEvent> { continuation in
                        continuation.yield(.done("keyed"))
                        continuation.finish()
                    }
                }
            ),
            .whenBecomesTrue({ $0.started }, effect: { _ in .done("becomesTrue") }),
            .firstValueAfterNil({ $0.started ? 1 : nil }, effect: { _ in .done("firstValue") }),
            .react(request: { $0.started ? 2 : nil }, effect: { _ in .done("second request") }),
        ]
    }

    static let launchOrder = ["request", "set", "keyed", "becomesTrue", "firstValue", "second request"]

    /// Starts six effects in one step, `repetitions` times; returns how many runs did not deliver in start order.
    static func launchRounds() -> Int {
        var mismatches = 0
        for _ in 0..<repetitions {
            let loop = Loop(initial: Launch(), reduce: reduceLaunch, feedbacks: launchFeedbacks)
            loop.send(.start)
            if loop.state.log != launchOrder { mismatches += 1 }
            loop.stop()
        }
        return mismatches
    }

    @Test func immediateEffectsDeliverAtOnceInTheOrderTheyStarted() async {
        #expect(Self.launchRounds() == 0)
        // The same from a thread that is not running a task, as the service's I/O threads send.
        let fromThread = Box(-1)
        await onThread { fromThread.value = Self.launchRounds() }
        #expect(fromThread.value == 0)
    }

    @Test func twoImmediateFeedbacksStartedInOneStepDeliverInStartOrder() {
        // Loop's scenario: both predicates hold for the initial state, so both effects start in its step; "_a" must
        // be reduced first, every time.
        let expected = ["initial", "initial_a", "initial_a_b", "initial_a_b_a", "initial_a_b_a_b"]
        for _ in 0..<Self.repetitions {
            let states = Recorder<String>()
            let loop = Loop<String, String>(
                initial: "initial",
                reduce: { $0 += $1 },
                feedbacks: [
                    .whenBecomesTrue({ !$0.hasSuffix("_a") && $0.count < 20 }, effect: { _ in "_a" }),
                    .whenBecomesTrue({ !$0.hasSuffix("_b") && $0.count < 20 }, effect: { _ in "_b" }),
                    .steps { state, _, _ in states.append(state) },
                ]
            )
            #expect(states.all.prefix(expected.count) == expected[...])
            loop.stop()
        }
    }

    @Test func stepsFeedbackSeesTheInitialStateWithNoEventThenEveryStateWithItsEvent() {
        struct Pair: Sendable, Equatable {
            let state: String
            let event: String?
        }
        let expected = [
            Pair(state: "", event: nil), Pair(state: "a", event: "a"), Pair(state: "ab", event: "b"),
            Pair(state: "abc", event: "c"),
        ]
        for _ in 0..<Self.repetitions {
            let pairs = Recorder<Pair>()
            let loop = Loop<String, String>(
                initial: "",
                reduce: { $0 += $1 },
                feedbacks: [
                    .steps { state, event, _ in pairs.append(Pair(state: state, event: event)) },
                    .steps { _, event, sink in
                        if event == nil { sink.send("a") }
                        if event == "a" { sink.send("b") }
                    },
                    .react(request: { $0 == "ab" ? $0 : nil }, effect: { _ in "c" }),
                ]
            )
            #expect(pairs.all == expected)
            loop.stop()
        }
    }
}
