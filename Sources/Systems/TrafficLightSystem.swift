public import FeedbackLoop
public import SystemKit

/// A traffic light cycling red, green, yellow on timers while it runs; clients start and stop it.
public struct TrafficLightSystem: FeedbackSystem {
    /// The light's state.
    public struct State: Codable, Equatable, Sendable {
        /// The lit lamp.
        public enum Phase: String, Codable, Sendable, CaseIterable {
            case red
            case green
            case yellow

            /// The phase that follows this one.
            public var next: Phase {
                switch self {
                case .red: .green
                case .green: .yellow
                case .yellow: .red
                }
            }
        }

        /// The lit lamp.
        public var phase: Phase
        /// Whether the timers run.
        public var running: Bool
        /// Phase changes so far.
        public var changes: Int

        /// Creates a state.
        public init(phase: Phase = .red, running: Bool = false, changes: Int = 0) {
            self.phase = phase
            self.running = running
            self.changes = changes
        }
    }

    /// `start` and `stop` are the client's; `advance` is the timer feedback's.
    public enum Event: Codable, Equatable, Sendable {
        case start
        case stop
        case advance

        static let types = ["start", "stop", "advance"]

        public init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: TaggedEventKey.self)
            switch try container.eventType() {
            case "start": self = .start
            case "stop": self = .stop
            case "advance": self = .advance
            case let other: throw container.unknownType(other, known: Self.types)
            }
        }

        public func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: TaggedEventKey.self)
            let type =
                switch self {
                case .start: "start"
                case .stop: "stop"
                case .advance: "advance"
                }
            try container.encode(type, forKey: .type)
        }
    }

    /// How long each phase lasts.
    public let durations: [State.Phase: Duration]

    /// Creates the system with a duration per phase (defaults: red 4 s, green 3 s, yellow 1 s).
    public init(red: Duration = .seconds(4), green: Duration = .seconds(3), yellow: Duration = .seconds(1)) {
        durations = [.red: red, .green: green, .yellow: yellow]
    }

    public var name: String { "traffic-light" }
    public var summary: String {
        "A traffic light: start it and it cycles red, green, yellow on timers until stopped."
    }
    public var clientEventTypes: [String] { ["start", "stop"] }
    public var exampleEvents: [Event] { [.start, .stop] }
    public var initialState: State { State() }

    public static func reduce(_ state: inout State, _ event: Event) {
        switch event {
        case .start:
            state.running = true
        case .stop:
            state.running = false
        case .advance:
            guard state.running else { return }
            state.phase = state.phase.next
            state.changes = state.changes.saturatingAdding(1)
        }
    }

    /// The timer for the current phase, identified by the change count so every phase gets a fresh timer and a
    /// stop cancels the one running.
    private struct PhaseTimer: Equatable, Sendable {
        let change: Int
        let duration: Duration
    }

    public func feedbacks(_ environment: SystemEnvironment) -> [Feedback<State, Event>] {
        let clock = environment.clock
        let durations = durations
        return [
            .react(
                request: { state in
                    state.running ? PhaseTimer(change: state.changes, duration: durations[state.phase]!) : nil
                },
                effect: { timer in
                    try await clock.sleep(for: timer.duration)
                    return .advance
                }
            )
        ]
    }
}
