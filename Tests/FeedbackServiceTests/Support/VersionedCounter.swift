import FeedbackJSON
import FeedbackLoop
import SystemKit

/// A `counter` at two schema versions, for the migration and verification proofs.
///
/// Version 1 keeps `{"count": n}` and takes `add` with `amount`; version 2 renamed both (`total`, `by`) and migrates
/// version 1's JSON. `DecrementsTwice` is version 2 with a changed reducer for one event type (`decrement`).
enum VersionedCounter {
    /// One step of a session, whatever the version: what the test generates and both versions' events express.
    enum Operation: Sendable, Equatable {
        case increment
        case decrement
        case add(Int)
    }

    struct V1: FeedbackSystem {
        struct State: Codable, Equatable, Sendable { var count = 0 }
        typealias Event = CounterEvent<AmountIsAmount>

        var name: String { "counter" }
        var summary: String { "version 1" }
        var clientEventTypes: [String] { ["increment", "decrement", "add"] }
        var exampleEvents: [Event] { [.increment] }
        var initialState: State { State() }

        static func reduce(_ state: inout State, _ event: Event) {
            switch event {
            case .increment: state.count &+= 1
            case .decrement: state.count &-= 1
            case .add(let amount): state.count &+= amount
            }
        }

        func feedbacks(_ environment: SystemEnvironment) -> [Feedback<State, Event>] { [] }
    }

    struct V2: FeedbackSystem {
        struct State: Codable, Equatable, Sendable { var total = 0 }
        typealias Event = CounterEvent<AmountIsBy>

        var name: String { "counter" }
        var summary: String { "version 2: count is total, add's amount is by" }
        var clientEventTypes: [String] { ["increment", "decrement", "add"] }
        var exampleEvents: [Event] { [.increment] }
        var initialState: State { State() }
        var schemaVersion: Int { 2 }
        var migrations: [SchemaMigration] { [VersionedCounter.oneToTwo] }

        static func reduce(_ state: inout State, _ event: Event) {
            switch event {
            case .increment: state.total &+= 1
            case .decrement: state.total &-= 1
            case .add(let amount): state.total &+= amount
            }
        }

        func feedbacks(_ environment: SystemEnvironment) -> [Feedback<State, Event>] { [] }
    }

    /// Version 2 whose reducer changed for `decrement` (it subtracts two): the build `verify` must catch.
    struct DecrementsTwice: FeedbackSystem {
        typealias State = V2.State
        typealias Event = V2.Event
        var name: String { "counter" }
        var summary: String { "version 2, decrement changed" }
        var clientEventTypes: [String] { ["increment", "decrement", "add"] }
        var exampleEvents: [Event] { [.increment] }
        var initialState: State { State() }
        var schemaVersion: Int { 2 }
        var migrations: [SchemaMigration] { [VersionedCounter.oneToTwo] }

        static func reduce(_ state: inout State, _ event: Event) {
            if case .decrement = event {
                state.total &-= 2
            } else {
                V2.reduce(&state, event)
            }
        }

        func feedbacks(_ environment: SystemEnvironment) -> [Feedback<State, Event>] { [] }
    }

    /// 1 → 2: the state's `count` is `total`, `add`'s `amount` is `by`.
    static let oneToTwo = SchemaMigration(
        from: 1,
        state: { state throws(MigrationFailure) in try state.renamingMember("count", to: "total") },
        event: { event throws(MigrationFailure) in
            event.eventType == "add" ? try event.renamingMember("amount", to: "by") : event
        }
    )
}

/// How a version spells `add`'s amount.
protocol AmountSpelling: Sendable {
    static var key: String { get }
}

/// Version 1's `amount`.
enum AmountIsAmount: AmountSpelling {
    static var key: String { "amount" }
}

/// Version 2's `by`.
enum AmountIsBy: AmountSpelling {
    static var key: String { "by" }
}

/// The counter's events, `add`'s amount spelled as `Spelling` says.
enum CounterEvent<Spelling: AmountSpelling>: Codable, Equatable, Sendable {
    case increment
    case decrement
    case add(Int)

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: TaggedEventKey.self)
        switch try container.eventType() {
        case "increment": self = .increment
        case "decrement": self = .decrement
        case "add": self = .add(try container.decode(Int.self, forKey: TaggedEventKey(Spelling.key)))
        case let other: throw container.unknownType(other, known: ["increment", "decrement", "add"])
        }
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: TaggedEventKey.self)
        switch self {
        case .increment: try container.encode("increment", forKey: .type)
        case .decrement: try container.encode("decrement", forKey: .type)
        case .add(let amount):
            try container.encode("add", forKey: .type)
            try container.encode(amount, forKey: TaggedEventKey(Spelling.key))
        }
    }

    init(_ operation: VersionedCounter.Operation) {
        switch operation {
        case .increment: self = .increment
        case .decrement: self = .decrement
        case .add(let amount): self = .add(amount)
        }
    }
}
