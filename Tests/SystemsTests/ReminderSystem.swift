import FeedbackLoop
import FeedbackService
import SystemKit

// The example of docs/SYSTEMS.md, compiled and tested here so the guide stays true.

/// Fires a text after some seconds: the pending reminder is in the state with its absolute deadline (a durable
/// timer), and a timer feedback fires it when the deadline comes, across restarts.
struct ReminderSystem: FeedbackSystem {
    struct State: Codable, Equatable, Sendable {
        var pending: Reminder?
        var fired: [String] = []
    }

    struct Reminder: Codable, Equatable, Sendable {
        var text: String
        var seconds: Int
        /// When it fires: set by the `schedule` event right after the reminder is posted.
        var due: WallTime?
    }

    enum Event: Codable, Sendable {
        case remind(text: String, seconds: Int)  // posted by clients
        case schedule(due: WallTime)  // sent by the scheduling feedback
        case fire  // sent by the timer feedback

        private enum Keys: String, CodingKey { case type, text, seconds, due }

        init(from decoder: any Decoder) throws {
            let fields = try decoder.container(keyedBy: Keys.self)
            switch try fields.decode(String.self, forKey: .type) {
            case "remind":
                self = .remind(
                    text: try fields.decode(String.self, forKey: .text),
                    seconds: try fields.decode(Int.self, forKey: .seconds)
                )
            case "schedule": self = .schedule(due: try fields.decode(WallTime.self, forKey: .due))
            case "fire": self = .fire
            case let other:
                throw DecodingError.dataCorruptedError(forKey: .type, in: fields, debugDescription: "no type \(other)")
            }
        }

        func encode(to encoder: any Encoder) throws {
            var fields = encoder.container(keyedBy: Keys.self)
            switch self {
            case .remind(let text, let seconds):
                try fields.encode("remind", forKey: .type)
                try fields.encode(text, forKey: .text)
                try fields.encode(seconds, forKey: .seconds)
            case .schedule(let due):
                try fields.encode("schedule", forKey: .type)
                try fields.encode(due, forKey: .due)
            case .fire:
                try fields.encode("fire", forKey: .type)
            }
        }
    }

    var name: String { "reminder" }
    var summary: String { "Fires a text after some seconds." }
    var clientEventTypes: [String] { ["remind"] }
    var exampleEvents: [Event] { [.remind(text: "tea", seconds: 3)] }
    var initialState: State { State() }

    static func reduce(_ state: inout State, _ event: Event) {
        switch event {
        case .remind(let text, let seconds):
            state.pending = Reminder(text: text, seconds: seconds)
        case .schedule(let due):
            if state.pending?.due == nil { state.pending?.due = due }
        case .fire:
            if let text = state.pending?.text { state.fired.append(text) }
            state.pending = nil
        }
    }

    func feedbacks(_ environment: SystemEnvironment) -> [Feedback<State, Event>] {
        let wallClock = environment.wallClock
        return [
            // A reminder without a deadline gets one: now plus its delay, kept in the state.
            .react(
                request: { $0.pending?.due == nil ? $0.pending : nil },
                effect: { reminder in .schedule(due: wallClock.now() + .seconds(reminder.seconds)) }
            ),
            // The deadline is waited for; a new reminder (another deadline) cancels the old wait.
            .react(
                request: { $0.pending?.due },
                effect: { due in
                    try await wallClock.sleep(until: due)
                    return .fire
                }
            ),
        ]
    }
}
