import FeedbackLoop
import FeedbackService
import SystemKit

/// A test-only system whose state holds client strings: a text, a list of items and a padding that makes states
/// as large as a test needs.
struct NotesSystem: FeedbackSystem {
    struct State: Codable, Equatable, Sendable {
        var text = ""
        var items: [String] = []
        var padding = ""
    }

    enum Event: Codable, Sendable {
        case set(String)
        case append(String)
        case removeLast
        case pad(Int)

        private enum Key: String, CodingKey { case type, text, item, bytes }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: Key.self)
            switch try container.decode(String.self, forKey: .type) {
            case "set": self = .set(try container.decode(String.self, forKey: .text))
            case "append": self = .append(try container.decode(String.self, forKey: .item))
            case "removeLast": self = .removeLast
            case "pad": self = .pad(try container.decode(Int.self, forKey: .bytes))
            case let other:
                throw DecodingError.dataCorruptedError(forKey: .type, in: container, debugDescription: "no \(other)")
            }
        }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: Key.self)
            switch self {
            case .set(let text):
                try container.encode("set", forKey: .type)
                try container.encode(text, forKey: .text)
            case .append(let item):
                try container.encode("append", forKey: .type)
                try container.encode(item, forKey: .item)
            case .removeLast:
                try container.encode("removeLast", forKey: .type)
            case .pad(let bytes):
                try container.encode("pad", forKey: .type)
                try container.encode(bytes, forKey: .bytes)
            }
        }
    }

    var name: String { "notes" }
    var summary: String { "Test notes." }
    var clientEventTypes: [String] { ["set", "append", "removeLast", "pad"] }
    var exampleEvents: [Event] { [.set("hello")] }
    var initialState: State { State() }

    static func reduce(_ state: inout State, _ event: Event) {
        switch event {
        case .set(let text): state.text = text
        case .append(let item): state.items.append(item)
        case .removeLast: _ = state.items.popLast()
        case .pad(let bytes): state.padding = String(repeating: Character(String(state.items.count % 10)), count: bytes)
        }
    }

    func feedbacks(_ environment: SystemEnvironment) -> [Feedback<State, Event>] { [] }
}
