public import FeedbackLoop
public import SystemKit

/// Play Catch from the seeds: the human throws the ball to the machine, and the machine throws it back after a
/// configurable delay, through a durable timer: the throw-back's deadline is kept in the state, so a restart or a
/// passivation while the machine holds the ball does not delay it.
public struct CatchSystem: FeedbackSystem {
    /// Who holds the ball, and how many throws so far.
    @FeedbackSchema
    public struct State: Codable, Equatable, Sendable {
        /// Who has the ball.
        @FeedbackSchema
        public enum Holder: String, Codable, Sendable {
            case human
            case machine
        }

        /// Who has the ball.
        public var holder: Holder
        /// Throws made by either side.
        public var throwCount: Int
        /// When the machine throws the ball back, while it holds it: an absolute deadline.
        public var throwBackAt: WallTime?

        /// Creates a state.
        public init(holder: Holder = .human, throwCount: Int = 0, throwBackAt: WallTime? = nil) {
            self.holder = holder
            self.throwCount = throwCount
            self.throwBackAt = throwBackAt
        }
    }

    /// `throwToMachine` is the client's; `schedule` and `throwToHuman` are the machine's timer feedbacks'.
    @FeedbackEvent
    public enum Event: Equatable, Sendable {
        case throwToMachine
        /// The machine will throw the ball back at `until` (sent when it caught the ball).
        @Effect case schedule(until: WallTime)
        @Effect case throwToHuman
    }

    /// How long the machine holds the ball before throwing it back.
    public let throwBackDelay: Duration

    /// Creates the system; the seeds' machine waits one second.
    public init(throwBackDelay: Duration = .seconds(1)) {
        self.throwBackDelay = throwBackDelay
    }

    public var name: String { "catch" }
    public var summary: String {
        "Play Catch: throw the ball to the machine, which throws it back after \(throwBackDelay)."
    }
    public var exampleEvents: [Event] { [.throwToMachine] }
    public var initialState: State { State() }

    /// A throw only counts from the side that holds the ball; any other is ignored.
    public static func reduce(_ state: inout State, _ event: Event) {
        switch (event, state.holder) {
        case (.throwToMachine, .human):
            state.holder = .machine
            state.throwCount = state.throwCount.saturatingAdding(1)
            state.throwBackAt = nil
        case (.schedule(let until), .machine) where state.throwBackAt == nil:
            state.throwBackAt = until
        case (.throwToHuman, .machine):
            state.holder = .human
            state.throwCount = state.throwCount.saturatingAdding(1)
            state.throwBackAt = nil
        default:
            break
        }
    }

    /// The throw-back while the machine holds the ball.
    public func nextDeadline(of state: State) -> WallTime? {
        state.holder == .machine ? state.throwBackAt : nil
    }

    /// Two durable-timer feedbacks: a caught ball gets its throw-back deadline (now plus the delay), and a
    /// deadline is waited for, then the ball goes back. A deadline missed while the server was down fires at once.
    public func feedbacks(_ environment: SystemEnvironment) -> [Feedback<State, Event>] {
        let wallClock = environment.wallClock
        let delay = throwBackDelay
        return [
            // The request is the throw being answered, so each catch gets its own deadline.
            .react(
                request: { $0.holder == .machine && $0.throwBackAt == nil ? $0.throwCount : nil },
                effect: { _ in .schedule(until: wallClock.now() + delay) }
            ),
            .react(
                request: { $0.holder == .machine ? $0.throwBackAt : nil },
                effect: { deadline in
                    try await wallClock.sleep(until: deadline)
                    return .throwToHuman
                }
            ),
        ]
    }
}
