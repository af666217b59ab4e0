import FeedbackLoop
import SystemKit

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

// Four systems with the bugs a hosted system can have (issue 31), written as a user would write them.

/// The events of the hostile systems: a tag and nothing else, so that one decoder serves them all.
enum HostileEvent: Codable, Equatable, Sendable {
    case increment
    case tick
    case start
    case nap
    case boom
    case fuse

    static let names: [HostileEvent: String] = [
        .increment: "increment", .tick: "tick", .start: "start", .nap: "nap", .boom: "boom", .fuse: "fuse",
    ]

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: TaggedEventKey.self)
        let type = try container.eventType()
        guard let event = Self.names.first(where: { $0.value == type })?.key else {
            throw container.unknownType(type, known: Array(Self.names.values).sorted())
        }
        self = event
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: TaggedEventKey.self)
        try container.encode(Self.names[self]!, forKey: .type)
    }
}

/// A count of client events and of the feedbacks' ticks.
struct HostileState: Codable, Equatable, Sendable {
    var count = 0
    var ticks = 0
    var storming = false
    var fused = false

    static func reduce(_ state: inout HostileState, _ event: HostileEvent) {
        switch event {
        case .increment, .nap, .boom: state.count += 1
        case .tick: state.ticks += 1
        case .start: state.storming = true
        case .fuse: state.fused = true
        }
    }
}

/// What the four hostile systems share: the state, the events and the counting reducer.
protocol HostileSystem: FeedbackSystem where State == HostileState, Event == HostileEvent {}

extension HostileSystem {
    var exampleEvents: [Event] { [.increment] }
    var initialState: State { State() }

    static func reduce(_ state: inout State, _ event: Event) { HostileState.reduce(&state, event) }

    func feedbacks(_ environment: SystemEnvironment) -> [Feedback<State, Event>] { [] }
}

/// A feedback that answers every state without suspending: Loop's "effect on every state". It runs from the moment
/// the session starts.
struct RunawaySystem: HostileSystem {
    var name: String { "runaway" }
    var summary: String { "A feedback that emits a tick for every state." }
    var clientEventTypes: [String] { ["increment"] }

    func feedbacks(_ environment: SystemEnvironment) -> [Feedback<State, Event>] {
        [.react(request: { $0 }, effect: { _ in .tick }).named("tick-on-every-state")]
    }
}

/// A reducer that sleeps two seconds on one event type.
struct SleepySystem: HostileSystem {
    var name: String { "sleepy" }
    var summary: String { "A reducer that sleeps 2 s on a nap." }
    var clientEventTypes: [String] { ["increment", "nap"] }

    static func reduce(_ state: inout State, _ event: Event) {
        if event == .nap { usleep(2_000_000) }
        HostileState.reduce(&state, event)
    }
}

/// A feedback whose effect emits ticks as fast as it can once started: an event storm.
struct StormSystem: HostileSystem {
    var name: String { "storm" }
    var summary: String { "Once started, an effect emits ticks as fast as it can." }
    var clientEventTypes: [String] { ["increment", "start"] }

    func feedbacks(_ environment: SystemEnvironment) -> [Feedback<State, Event>] {
        [
            .react(
                request: { $0.storming ? true : nil },
                effects: { _ in
                    AsyncStream<Event> { continuation in
                        let producer = Task {
                            while !Task.isCancelled {
                                for _ in 0..<1_000 { continuation.yield(.tick) }
                                await Task.yield()
                            }
                            continuation.finish()
                        }
                        continuation.onTermination = { _ in producer.cancel() }
                    }
                }
            ).named("storm")
        ]
    }
}

/// A reducer that traps on one event type (an index out of range, as a bug would), and a feedback whose effect traps
/// once it is fused, after a suspension (in the effect's asynchronous part, as a bug in decoding a fetched page would).
struct TrapSystem: HostileSystem {
    var name: String { "trap" }
    var summary: String { "A reducer that traps on a boom; once fused, an effect traps after a sleep." }
    var clientEventTypes: [String] { ["increment", "boom", "fuse"] }

    func feedbacks(_ environment: SystemEnvironment) -> [Feedback<State, Event>] {
        [
            .react(request: { $0.fused ? true : nil }) { _ in
                try await Task.sleep(for: .milliseconds(20))
                let empty: [Int] = []
                return empty[0] == 0 ? .tick : nil  // out of range: a trap
            }.named("fuse")
        ]
    }

    static func reduce(_ state: inout State, _ event: Event) {
        if event == .boom {
            let empty: [Int] = []
            state.count = empty[state.count]  // out of range: a trap
        }
        HostileState.reduce(&state, event)
    }
}
