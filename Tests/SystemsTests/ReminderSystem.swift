import FeedbackLoop
import FeedbackService
import SystemKit

// The example of docs/SYSTEMS.md, compiled and tested here so the guide stays true.

/// Fires a text after some seconds: the pending reminder is in the state, a timer feedback fires it.
struct ReminderSystem: FeedbackSystem {
    struct State: Codable, Equatable, Sendable {
        var pending: Reminder?
        var fired: [String] = []
    }

    struct Reminder: Codable, Equatable, Sendable {
        var text: String
        var seconds: Int
    }

    enum Event: Codable, Sendable {
        case remind(Reminder)  // posted by clients
        case fire  // sent by the timer feedback

        private enum Keys: String, CodingKey { case type, text, seconds }

        init(from decoder: any Decoder) throws {
            let fields = try decoder.container(keyedBy: Keys.self)
            switch try fields.decode(String.self, forKey: .type) {
            case "remind":
                self = .remind(
                    Reminder(
                        text: try fields.decode(String.self, forKey: .text),
                        seconds: try fields.decode(Int.self, forKey: .seconds)
                    )
                )
            case "fire": self = .fire
            case let other:
                throw DecodingError.dataCorruptedError(forKey: .type, in: fields, debugDescription: "no type \(other)")
            }
        }

        func encode(to encoder: any Encoder) throws {
            var fields = encoder.container(keyedBy: Keys.self)
            switch self {
            case .remind(let reminder):
                try fields.encode("remind", forKey: .type)
                try fields.encode(reminder.text, forKey: .text)
                try fields.encode(reminder.seconds, forKey: .seconds)
            case .fire:
                try fields.encode("fire", forKey: .type)
            }
        }
    }

    var name: String { "reminder" }
    var summary: String { "Fires a text after some seconds." }
    var clientEventTypes: [String] { ["remind"] }
    var exampleEvents: [Event] { [.remind(Reminder(text: "tea", seconds: 3))] }
    var initialState: State { State() }

    static func reduce(_ state: inout State, _ event: Event) {
        switch event {
        case .remind(let reminder):
            state.pending = reminder
        case .fire:
            if let text = state.pending?.text { state.fired.append(text) }
            state.pending = nil
        }
    }

    func feedbacks(_ environment: SystemEnvironment) -> [Feedback<State, Event>] {
        let clock = environment.clock
        return [
            // The effect to run is the pending reminder; a new one cancels the old timer.
            .react(
                request: { $0.pending },
                effect: { reminder in
                    try await clock.sleep(for: .seconds(reminder.seconds))
                    return .fire
                }
            )
        ]
    }
}
