import FeedbackLoop
import FeedbackService
import Foundation
import Synchronization
import SystemKit
import Testing
import Upstream

/// The work one post does (issue 30): with the shipped defaults (journal, memory budget) and one stream subscriber,
/// a posted event is decoded once, reduced once and its state encoded once, shared by the answer, the journal record,
/// the stream and the cache. Counted by a system whose event decoding, reducer and state encoding count themselves.
@Suite(.timeLimit(.minutes(1)))
struct PostWorkTests {
    /// How often the counting system's code ran.
    static let decodes = Atomic<Int>(0)
    static let plainReads = Atomic<Int>(0)
    static let reduces = Atomic<Int>(0)
    static let encodes = Atomic<Int>(0)

    struct CountingSystem: FeedbackSystem {
        struct State: Codable, Equatable, Sendable {
            var count = 0

            init() {}

            init(from decoder: any Decoder) throws {
                let container = try decoder.container(keyedBy: TaggedEventKey.self)
                count = try container.decode(Int.self, forKey: TaggedEventKey("count"))
            }

            func encode(to encoder: any Encoder) throws {
                PostWorkTests.encodes.add(1, ordering: .relaxed)
                var container = encoder.container(keyedBy: TaggedEventKey.self)
                try container.encode(count, forKey: TaggedEventKey("count"))
            }
        }

        enum Event: Codable, Sendable {
            case add

            init(from decoder: any Decoder) throws {
                PostWorkTests.decodes.add(1, ordering: .relaxed)
                let container = try decoder.container(keyedBy: TaggedEventKey.self)
                let type = try container.eventType()
                guard type == "add" else { throw container.unknownType(type, known: ["add"]) }
                self = .add
            }

            func encode(to encoder: any Encoder) throws {
                var container = encoder.container(keyedBy: TaggedEventKey.self)
                try container.encode("add", forKey: .type)
            }
        }

        /// Reads its events from their members, as `@FeedbackEvent`'s reader does, and counts.
        static func decodeEvent(plain fields: EventFields) -> Event? {
            PostWorkTests.plainReads.add(1, ordering: .relaxed)
            return fields.type == "add" ? .add : nil
        }

        var name: String { "counting" }
        var summary: String { "Test: counts its own decodes, reduces and encodings." }
        var clientEventTypes: [String] { ["add"] }
        var exampleEvents: [Event] { [.add] }
        var initialState: State { State() }

        static func reduce(_ state: inout State, _ event: Event) {
            PostWorkTests.reduces.add(1, ordering: .relaxed)
            state.count += 1
        }

        func feedbacks(_ environment: SystemEnvironment) -> [Feedback<State, Event>] { [] }
    }

    @Test func aPostWithOneSubscriberDecodesReducesAndEncodesOnce() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("post-work-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let server = try JournaledServer.start(
            ["--data-dir", directory.path],
            systems: [HostedSystem(CountingSystem())]
        )
        let id = try await server.api.create("counting")
        let port = Int(server.api.base.split(separator: ":").last!)!
        let stream = try SSEReader(port: port, path: "/v1/sessions/\(id)/stream")
        _ = try await stream.nextEvent()  // the current state
        // A plain body is read where its bytes lie, a batch and a body of escapes through the parser's tree: each
        // event read once, by the system's reader of members.
        let bodies = [#"{"type":"add"}"#, #"{"events":[{"type":"add"}]}"#, #"{"type":"\u0061dd"}"#]
        for (round, body) in zip(1..., bodies) {
            Self.decodes.store(0, ordering: .relaxed)
            Self.plainReads.store(0, ordering: .relaxed)
            Self.reduces.store(0, ordering: .relaxed)
            Self.encodes.store(0, ordering: .relaxed)
            let answer = try await server.api.post(id, body)
            #expect((answer["state"] as? [String: Any])?["count"] as? Int == round)
            let shown = try await stream.nextEvent()
            #expect(shown.data.contains("\(round)"))
            #expect(Self.plainReads.load(ordering: .relaxed) == 1, "reads from members in round \(round)")
            #expect(Self.decodes.load(ordering: .relaxed) == 0, "decoder runs in round \(round)")
            #expect(Self.reduces.load(ordering: .relaxed) == 1, "reduces in round \(round)")
            #expect(Self.encodes.load(ordering: .relaxed) == 1, "state encodings in round \(round)")
        }
        // A batch of three (its events and their states go to the loop in arrays; a single event's inline): each
        // event read and reduced once, and each of its three states encoded once: the last by the trial, the
        // earlier two by the recorder (their checksums), whose encodings the stream's frames take.
        Self.plainReads.store(0, ordering: .relaxed)
        Self.reduces.store(0, ordering: .relaxed)
        Self.encodes.store(0, ordering: .relaxed)
        let answer = try await server.api.post(id, #"{"events":[{"type":"add"},{"type":"add"},{"type":"add"}]}"#)
        #expect((answer["state"] as? [String: Any])?["count"] as? Int == bodies.count + 3)
        #expect(Self.plainReads.load(ordering: .relaxed) == 3)
        #expect(Self.reduces.load(ordering: .relaxed) == 3)
        #expect(Self.encodes.load(ordering: .relaxed) == 3, "state encodings for a batch of three")
        await stream.disconnect()
        await server.stop()
    }

    static let effectEncodes = Atomic<Int>(0)

    /// A system whose feedback answers a client's request with an event of its own, and whose state counts its
    /// encodings.
    struct EffectSystem: FeedbackSystem {
        struct State: Codable, Equatable, Sendable {
            var done = 0
            var pending = false

            init() {}

            init(from decoder: any Decoder) throws {
                let container = try decoder.container(keyedBy: TaggedEventKey.self)
                done = try container.decode(Int.self, forKey: TaggedEventKey("done"))
                pending = try container.decode(Bool.self, forKey: TaggedEventKey("pending"))
            }

            func encode(to encoder: any Encoder) throws {
                PostWorkTests.effectEncodes.add(1, ordering: .relaxed)
                var container = encoder.container(keyedBy: TaggedEventKey.self)
                try container.encode(done, forKey: TaggedEventKey("done"))
                try container.encode(pending, forKey: TaggedEventKey("pending"))
            }
        }

        enum Event: Codable, Sendable {
            case request
            case done

            init(from decoder: any Decoder) throws {
                let container = try decoder.container(keyedBy: TaggedEventKey.self)
                let type = try container.eventType()
                switch type {
                case "request": self = .request
                case "done": self = .done
                default: throw container.unknownType(type, known: ["request", "done"])
                }
            }

            func encode(to encoder: any Encoder) throws {
                var container = encoder.container(keyedBy: TaggedEventKey.self)
                try container.encode(self == .request ? "request" : "done", forKey: .type)
            }
        }

        var name: String { "effect-counting" }
        var summary: String { "Test: an effect's event, and the encodings of its state." }
        var clientEventTypes: [String] { ["request"] }
        var exampleEvents: [Event] { [.request] }
        var initialState: State { State() }

        static func reduce(_ state: inout State, _ event: Event) {
            switch event {
            case .request:
                state.pending = true
            case .done:
                state.pending = false
                state.done += 1
            }
        }

        func feedbacks(_ environment: SystemEnvironment) -> [Feedback<State, Event>] {
            [.react(request: { $0.pending ? $0.done : nil }, effect: { _ in .done })]
        }
    }

    /// The state an effect's event makes is encoded once with the journal's checksums on and a stream subscriber:
    /// by the recorder, whose encoding the session keeps for the stream's frame and a `GET`.
    @Test func anEffectsStepIsEncodedOnceForTheJournalTheStreamAndAGet() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("post-work-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let server = try JournaledServer.start(["--data-dir", directory.path], systems: [HostedSystem(EffectSystem())])
        let id = try await server.api.create("effect-counting")
        let port = Int(server.api.base.split(separator: ":").last!)!
        let stream = try SSEReader(port: port, path: "/v1/sessions/\(id)/stream")
        _ = try await stream.nextEvent()  // the current state
        Self.effectEncodes.store(0, ordering: .relaxed)
        let answer = try await server.api.post(id, #"{"type":"request"}"#)
        #expect((answer["state"] as? [String: Any])?["pending"] as? Bool == true)
        // The effect's step reaches the stream (a frame of it, or of it conflated with the post's)...
        var shown = false
        for _ in 0..<4 where !shown {
            shown = try await stream.nextEvent().data.contains("false")
        }
        #expect(shown, "the stream shows the effect's state")
        // ...and a GET answers it.
        let state = try await server.api.send("GET", "/v1/sessions/\(id)")
        let body = try JSONSerialization.jsonObject(with: Data(state.body)) as? [String: Any]
        #expect((body?["state"] as? [String: Any])?["done"] as? Int == 1)
        // One encoding for the post's state (its trial), one for the effect's.
        #expect(Self.effectEncodes.load(ordering: .relaxed) == 2, "state encodings")
        await stream.disconnect()
        await server.stop()
    }
}
