import FeedbackLoop
import SystemKit

/// A poll: open it with a question, its choices and how long it runs; clients vote; it closes itself when its time
/// is up (a durable timer: the deadline is in the state).
public struct PollSystem: FeedbackSystem {
    @FeedbackSchema
    public struct State: Codable, Equatable, Sendable {
        public var question: String = ""
        public var votes: [String: Int] = [:]
        public var status: Status = .closed
        public var closesAt: WallTime?
        public var seconds: Int = 0

        public init() {}
    }

    @FeedbackSchema
    public enum Status: String, Codable, Sendable {
        case open, closed
    }

    @FeedbackEvent
    public enum Event: Equatable, Sendable {
        case open(question: String, choices: [String], seconds: Int)  // {"type":"open","question":…,"choices":[…],…}
        case vote(choice: String)
        @Effect case schedule(closesAt: WallTime)  // the timer feedback's: clients may not post it
        @Effect case close
    }

    public init() {}

    public var name: String { "poll" }
    public var summary: String { "A poll that closes itself: open it, vote, read the counts." }
    public var exampleEvents: [Event] {
        [.open(question: "Tea?", choices: ["yes", "no"], seconds: 60), .vote(choice: "yes")]
    }
    public var initialState: State { State() }

    public static func reduce(_ state: inout State, _ event: Event) {
        switch event {
        case .open(let question, let choices, let seconds):
            state = State()
            state.question = question
            state.votes = Dictionary(choices.map { ($0, 0) }, uniquingKeysWith: { first, _ in first })
            state.status = .open
            state.seconds = max(seconds, 0)
        case .vote(let choice):
            guard state.status == .open, let count = state.votes[choice] else { return }
            state.votes[choice] = count.saturatingAdding(1)
        case .schedule(let closesAt):
            if state.status == .open && state.closesAt == nil { state.closesAt = closesAt }
        case .close:
            state.status = .closed
            state.closesAt = nil
        }
    }

    public func nextDeadline(of state: State) -> WallTime? { state.closesAt }

    public func feedbacks(_ environment: SystemEnvironment) -> [Feedback<State, Event>] {
        let wallClock = environment.wallClock
        return [
            .react(
                request: { $0.status == .open && $0.closesAt == nil ? $0.seconds : nil },
                effect: { seconds in .schedule(closesAt: wallClock.now() + .seconds(seconds)) }
            ),
            .react(
                request: { $0.status == .open ? $0.closesAt : nil },
                effect: { closesAt in
                    try await wallClock.sleep(until: closesAt)
                    return .close
                }
            ),
        ]
    }
}
