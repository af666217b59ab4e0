import FeedbackLoop
import SystemKit
import Systems

/// The counter as a client built against another reducer sees it: `increment` adds 2 (a reducer version that
/// differs from the server's, same name and schema version).
struct SkewedCounter: FeedbackSystem {
    typealias State = CounterSystem.State
    typealias Event = CounterSystem.Event

    var name: String { "counter" }
    var summary: String { "a counter whose increment adds 2" }
    var clientEventTypes: [String] { CounterSystem().clientEventTypes }
    var exampleEvents: [Event] { [] }
    var initialState: State { State() }

    static func reduce(_ state: inout State, _ event: Event) {
        CounterSystem.reduce(&state, event == .increment ? .add(amount: 2) : event)
    }

    func feedbacks(_ environment: SystemEnvironment) -> [Feedback<State, Event>] { [] }
}

/// The counter at another schema version: its snapshots' hash differs.
struct CounterVersionTwo: FeedbackSystem {
    typealias State = CounterSystem.State
    typealias Event = CounterSystem.Event

    var name: String { "counter" }
    var summary: String { "the counter, schema version 2" }
    var clientEventTypes: [String] { CounterSystem().clientEventTypes }
    var exampleEvents: [Event] { [] }
    var initialState: State { State() }
    var schemaVersion: Int { 2 }

    static func reduce(_ state: inout State, _ event: Event) { CounterSystem.reduce(&state, event) }

    func feedbacks(_ environment: SystemEnvironment) -> [Feedback<State, Event>] { [] }
}

/// The counter with an event the server's counter does not have (`multiply`): the server refuses it with 422.
struct CounterWithMultiply: FeedbackSystem {
    typealias State = CounterSystem.State

    enum Event: Codable, Sendable {
        case counter(CounterSystem.Event)
        case multiply(Int)

        init(from decoder: any Decoder) throws { self = .counter(try CounterSystem.Event(from: decoder)) }

        func encode(to encoder: any Encoder) throws {
            switch self {
            case .counter(let event): try event.encode(to: encoder)
            case .multiply(let factor):
                var container = encoder.container(keyedBy: TaggedEventKey.self)
                try container.encode("multiply", forKey: .type)
                try container.encode(factor, forKey: TaggedEventKey("factor"))
            }
        }
    }

    var name: String { "counter" }
    var summary: String { "the counter and multiply" }
    var clientEventTypes: [String] { CounterSystem().clientEventTypes + ["multiply"] }
    var exampleEvents: [Event] { [] }
    var initialState: State { State() }

    static func reduce(_ state: inout State, _ event: Event) {
        switch event {
        case .counter(let event): CounterSystem.reduce(&state, event)
        case .multiply(let factor): state.count *= factor
        }
    }

    func feedbacks(_ environment: SystemEnvironment) -> [Feedback<State, Event>] { [] }
}
