public import FeedbackLoop
public import SystemKit

/// A traffic light cycling red, green, yellow on timers while it runs; clients start and stop it.
public struct TrafficLightSystem: FeedbackSystem {
    /// The light's state.
    @FeedbackSchema
    public struct State: Codable, Equatable, Sendable {
        /// The lit lamp.
        @FeedbackSchema
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
    @FeedbackEvent
    public enum Event: Equatable, Sendable {
        case start
        case stop
        /// The running light's phase ends at `until` (sent when it has no deadline yet).
        @Effect case schedule(until: WallTime)
        /// The phase's deadline came; the next phase ends at `next`. Journals written before deadlines existed
        /// hold `advance` without `next`; the light then schedules the next phase afresh.
        @Effect case advance(next: WallTime?)
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

    /// The end of the lit phase while the light runs.
    public func nextDeadline(of state: State) -> WallTime? {
        state.running ? state.deadline : nil
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
