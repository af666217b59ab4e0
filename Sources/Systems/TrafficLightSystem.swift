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
        /// When the lit phase ends, while the light runs: an absolute deadline (a durable timer), so a restart or a
        /// passivation does not start the phase again. Nil while stopped, and for the instant between `start` and
        /// the timer's `schedule`.
        public var deadline: WallTime?

        /// Creates a state.
        public init(phase: Phase = .red, running: Bool = false, changes: Int = 0, deadline: WallTime? = nil) {
            self.phase = phase
            self.running = running
            self.changes = changes
            self.deadline = deadline
        }
    }

    /// `start` and `stop` are the client's; `schedule` and `advance` are the timer feedbacks'.
    public enum Event: Codable, Equatable, Sendable {
        case start
        case stop
        /// The running light's phase ends at `until` (sent when it has no deadline yet).
        case schedule(until: WallTime)
        /// The phase's deadline came; the next phase ends at `next`. Journals written before deadlines existed
        /// hold `advance` without `next`; the light then schedules the next phase afresh.
        case advance(next: WallTime?)

        static let types = ["start", "stop", "schedule", "advance"]

        private enum Field: String, CodingKey { case until, next }

        public init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: TaggedEventKey.self)
            let fields = try decoder.container(keyedBy: Field.self)
            switch try container.eventType() {
            case "start": self = .start
            case "stop": self = .stop
            case "schedule": self = .schedule(until: try fields.decode(WallTime.self, forKey: .until))
            case "advance": self = .advance(next: try fields.decodeIfPresent(WallTime.self, forKey: .next))
            case let other: throw container.unknownType(other, known: Self.types)
            }
        }

        public func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: TaggedEventKey.self)
            var fields = encoder.container(keyedBy: Field.self)
            switch self {
            case .start: try container.encode("start", forKey: .type)
            case .stop: try container.encode("stop", forKey: .type)
            case .schedule(let until):
                try container.encode("schedule", forKey: .type)
                try fields.encode(until, forKey: .until)
            case .advance(let next):
                try container.encode("advance", forKey: .type)
                try fields.encodeIfPresent(next, forKey: .next)
            }
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
            state.deadline = nil
        case .schedule(let until):
            guard state.running, state.deadline == nil else { return }
            state.deadline = until
        case .advance(let next):
            guard state.running else { return }
            state.phase = state.phase.next
            state.changes = state.changes.saturatingAdding(1)
            state.deadline = next
        }
    }

    /// The phase a running light waits out, with its deadline: a new deadline, or a stop, cancels the wait.
    private struct PhaseTimer: Equatable, Sendable {
        let phase: State.Phase
        let deadline: WallTime
    }

    /// Two durable-timer feedbacks. A running light without a deadline gets one (`schedule`, now plus the
    /// phase's duration). A light with a deadline waits for it, then advances with the next phase's deadline:
    /// the old deadline plus the next duration, so phases do not drift; when that is already past too (the server
    /// was down for longer than a phase), the missed deadline fires once and the next phase runs from now.
    public func feedbacks(_ environment: SystemEnvironment) -> [Feedback<State, Event>] {
        let wallClock = environment.wallClock
        let durations = durations
        return [
            .react(
                request: { state in state.running && state.deadline == nil ? state.phase : nil },
                effect: { phase in .schedule(until: wallClock.now() + durations[phase]!) }
            ),
            .react(
                request: { state -> PhaseTimer? in
                    guard state.running, let deadline = state.deadline else { return nil }
                    return PhaseTimer(phase: state.phase, deadline: deadline)
                },
                effect: { (timer: PhaseTimer) in
                    try await wallClock.sleep(until: timer.deadline)
                    let duration = durations[timer.phase.next]!
                    let next = timer.deadline + duration
                    let now = wallClock.now()
                    return .advance(next: next > now ? next : now + duration)
                }
            ),
        ]
    }
}
