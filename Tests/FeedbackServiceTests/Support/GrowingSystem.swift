import FeedbackLoop
import FeedbackService
import SystemKit

/// A test-only system whose state its own feedback grows: a client asks for `grow` N bytes, and an effect answers
/// with the internal event `grown`, which pads the state to N bytes. What a budget cannot refuse.
struct GrowingSystem: FeedbackSystem {
    struct State: Codable, Equatable, Sendable {
        var requested = 0
        var padding = ""
    }

    enum Event: Codable, Sendable {
        case grow(Int)
        case grown(Int)
        case clear

        private enum Key: String, CodingKey { case type, bytes }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: Key.self)
            switch try container.decode(String.self, forKey: .type) {
            case "grow": self = .grow(try container.decode(Int.self, forKey: .bytes))
            case "grown": self = .grown(try container.decode(Int.self, forKey: .bytes))
            case "clear": self = .clear
            case let other:
                throw DecodingError.dataCorruptedError(forKey: .type, in: container, debugDescription: "no \(other)")
            }
        }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: Key.self)
            switch self {
            case .grow(let bytes):
                try container.encode("grow", forKey: .type)
                try container.encode(bytes, forKey: .bytes)
            case .grown(let bytes):
                try container.encode("grown", forKey: .type)
                try container.encode(bytes, forKey: .bytes)
            case .clear:
                try container.encode("clear", forKey: .type)
            }
        }
    }

    var name: String { "growing" }
    var summary: String { "Test: a state its feedback grows." }
    var clientEventTypes: [String] { ["grow", "clear"] }
    var exampleEvents: [Event] { [.grow(10)] }
    var initialState: State { State() }

    static func reduce(_ state: inout State, _ event: Event) {
        switch event {
        case .grow(let bytes): state.requested = max(0, min(bytes, 1 << 24))
        case .grown(let bytes):
            state.padding = String(repeating: "g", count: bytes)
            state.requested = 0
        case .clear: state.padding = ""
        }
    }

    func feedbacks(_ environment: SystemEnvironment) -> [Feedback<State, Event>] {
        [.react(request: { $0.requested > 0 ? $0.requested : nil }, effect: { bytes in .grown(bytes) })]
    }
}
