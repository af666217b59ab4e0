import FeedbackLoop
import SystemKit
import Testing

@testable import Systems

@Suite(.statesFitTheirSchemas)
struct CounterSystemTests {
    @Test func incrementDecrementAndAdd() {
        var state = CounterSystem().initialState
        CounterSystem.reduceAndNote(&state, .increment)
        CounterSystem.reduceAndNote(&state, .increment)
        CounterSystem.reduceAndNote(&state, .decrement)
        CounterSystem.reduceAndNote(&state, .add(amount: 40))
        #expect(state.count == 41)
    }

    @Test func addSaturatesInsteadOfOverflowing() {
        var state = CounterSystem.State(count: Int.max - 1)
        CounterSystem.reduceAndNote(&state, .add(amount: 10))
        #expect(state.count == Int.max)
        CounterSystem.reduceAndNote(&state, .increment)
        #expect(state.count == Int.max)
        state.count = Int.min
        CounterSystem.reduceAndNote(&state, .decrement)
        CounterSystem.reduceAndNote(&state, .add(amount: Int.min))
        #expect(state.count == Int.min)
    }

    @Test func eventsAreTaggedByTypeOnTheWire() throws {
        #expect(try decode(CounterSystem.Event.self, #"{"type":"increment"}"#) == .increment)
        #expect(try decode(CounterSystem.Event.self, #"{"type":"add","amount":-3}"#) == .add(amount: -3))
        #expect(try encode(CounterSystem.Event.add(amount: 2)) == #"{"amount":2,"type":"add"}"#)
        #expect(try encode(CounterSystem.Event.decrement) == #"{"type":"decrement"}"#)
        #expect(try encode(CounterSystem.State(count: 3)) == #"{"count":3}"#)
    }

    @Test func unknownTypeErrorNamesTheKnownTypes() {
        do {
            _ = try decode(CounterSystem.Event.self, #"{"type":"multiply"}"#)
            Issue.record("multiply decoded")
        } catch {
            #expect("\(error)".contains("increment, decrement, add"))
        }
        #expect(throws: (any Error).self) { try decode(CounterSystem.Event.self, #"{"type":"add"}"#) }
        #expect(throws: (any Error).self) { try decode(CounterSystem.Event.self, #"{"type":"add","amount":"x"}"#) }
    }

    @Test func everyEventTypeIsAClientEvent() throws {
        let system = CounterSystem()
        #expect(system.clientEventTypes == ["increment", "decrement", "add"])
        for example in system.exampleEvents {
            #expect(try system.clientEventTypes.contains { try encode(example).contains("\"type\":\"\($0)\"") })
        }
    }

    @Test func runsInALoop() {
        let loop = CounterSystem().makeLoop(from: .init(), environment: environment(TestClock()))
        loop.send(.add(amount: 5))
        loop.send(.decrement)
        #expect(loop.state.count == 4)
        #expect(loop.revision == 2)
        loop.stop()
    }
}
