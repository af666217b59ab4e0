import FeedbackLoop
import FeedbackService
import SystemKit

/// A test-only system for the inspection routes: a client sets a secret and asks for a ping; a feedback named
/// "ponger" answers every ping with a pong (an effect's event). It declares its secret redacted.
struct InspectedSystem: FeedbackSystem {
    struct State: Codable, Equatable, Sendable {
        var secret = ""
        var waiting = false
        var pongs = 0
    }

    enum Event: Codable, Sendable {
        case set(secret: String)
        case ping
        case pong

        private enum Key: String, CodingKey { case type, secret }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: Key.self)
            switch try container.decode(String.self, forKey: .type) {
            case "set": self = .set(secret: try container.decode(String.self, forKey: .secret))
            case "ping": self = .ping
            case "pong": self = .pong
            case let other:
                throw DecodingError.dataCorruptedError(forKey: .type, in: container, debugDescription: "no \(other)")
            }
        }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: Key.self)
            switch self {
            case .set(let secret):
                try container.encode("set", forKey: .type)
                try container.encode(secret, forKey: .secret)
            case .ping: try container.encode("ping", forKey: .type)
            case .pong: try container.encode("pong", forKey: .type)
            }
        }
    }

    var name: String { "inspected" }
    var summary: String { "pings answered by a feedback; a redacted secret" }
    var clientEventTypes: [String] { ["set", "ping"] }
    var exampleEvents: [Event] { [.ping] }
    var initialState: State { State() }
    var redactedPointers: [String] { ["/secret"] }

    static func reduce(_ state: inout State, _ event: Event) {
        switch event {
        case .set(let secret): state.secret = secret
        case .ping: state.waiting = true
        case .pong:
            state.waiting = false
            state.pongs += 1
        }
    }

    func feedbacks(_ environment: SystemEnvironment) -> [Feedback<State, Event>] {
        [Feedback.react(request: { $0.waiting ? $0.pongs : nil }, effect: { _ in .pong }).named("ponger")]
    }
}
