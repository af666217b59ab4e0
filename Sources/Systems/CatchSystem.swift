public import FeedbackLoop
public import SystemKit

/// Play Catch from the seeds: the human throws the ball to the machine, and the machine throws it back after a
/// configurable delay, through a durable timer: the throw-back's deadline is kept in the state, so a restart or a
/// passivation while the machine holds the ball does not delay it.
public struct CatchSystem: FeedbackSystem {
    /// Who holds the ball, and how many throws so far.
    public struct State: Codable, Equatable, Sendable {
        /// Who has the ball.
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
    public enum Event: Codable, Equatable, Sendable {
        case throwToMachine
        /// The machine will throw the ball back at `until` (sent when it caught the ball).
        case schedule(until: WallTime)
        case throwToHuman

        static let types = ["throwToMachine", "schedule", "throwToHuman"]

        private enum Field: String, CodingKey { case until }

        public init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: TaggedEventKey.self)
            switch try container.eventType() {
            case "throwToMachine": self = .throwToMachine
            case "schedule":
                self = .schedule(
                    until: try decoder.container(keyedBy: Field.self).decode(WallTime.self, forKey: .until)
                )
            case "throwToHuman": self = .throwToHuman
            case let other: throw container.unknownType(other, known: Self.types)
            }
        }

        public func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: TaggedEventKey.self)
            switch self {
            case .throwToMachine: try container.encode("throwToMachine", forKey: .type)
            case .schedule(let until):
                try container.encode("schedule", forKey: .type)
                var fields = encoder.container(keyedBy: Field.self)
                try fields.encode(until, forKey: .until)
            case .throwToHuman: try container.encode("throwToHuman", forKey: .type)
            }
        }
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
    public var clientEventTypes: [String] { ["throwToMachine"] }
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
