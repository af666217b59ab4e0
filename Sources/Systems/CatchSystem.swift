public import FeedbackLoop
public import SystemKit

/// Play Catch from the seeds: the human throws the ball to the machine, and the machine throws it back after a
/// configurable delay, through a timer feedback on the environment's clock.
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

        /// Creates a state.
        public init(holder: Holder = .human, throwCount: Int = 0) {
            self.holder = holder
            self.throwCount = throwCount
        }
    }

    /// `throwToMachine` is the client's; `throwToHuman` is the machine's timer feedback's.
    public enum Event: Codable, Equatable, Sendable {
        case throwToMachine
        case throwToHuman

        static let types = ["throwToMachine", "throwToHuman"]

        public init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: TaggedEventKey.self)
            switch try container.eventType() {
            case "throwToMachine": self = .throwToMachine
            case "throwToHuman": self = .throwToHuman
            case let other: throw container.unknownType(other, known: Self.types)
            }
        }

        public func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: TaggedEventKey.self)
            try container.encode(self == .throwToMachine ? "throwToMachine" : "throwToHuman", forKey: .type)
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
        case (.throwToHuman, .machine):
            state.holder = .human
            state.throwCount = state.throwCount.saturatingAdding(1)
        default:
            break
        }
    }

    public func feedbacks(_ environment: SystemEnvironment) -> [Feedback<State, Event>] {
        let clock = environment.clock
        let delay = throwBackDelay
        return [
            // The request is the throw being answered, so each catch starts its own timer.
            .react(
                request: { $0.holder == .machine ? $0.throwCount : nil },
                effect: { _ in
                    try await clock.sleep(for: delay)
                    return .throwToHuman
                }
            )
        ]
    }
}
