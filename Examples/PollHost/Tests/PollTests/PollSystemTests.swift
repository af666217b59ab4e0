import FeedbackJSON
import FeedbackLoop
import FeedbackTesting
import Foundation
import Logging
import Poll
import SystemKit
import Testing
import Upstream

/// The poll as its author tests it: the reducer and timer under a `TestClock`, a session replayed as a fixture with
/// `FeedbackTesting`, and the wire format and schema the macros derived.
@Suite(.timeLimit(.minutes(1)))
struct PollSystemTests {
    struct NoUpstream: UpstreamFetching {
        struct Called: Error {}
        func fetch(_ request: UpstreamRequest) async throws -> UpstreamResponse { throw Called() }
    }

    @Test func aPollClosesItselfWhenItsTimeIsUp() async throws {
        let clock = TestClock()
        let environment = SystemEnvironment(
            clock: clock,
            wallClock: .following(clock, from: WallTime(millisecondsSince1970: 1_767_225_600_000)),
            upstream: NoUpstream(),
            logger: Logger(label: "PollTests")
        )
        let loop = PollSystem().makeLoop(from: PollSystem().initialState, environment: environment)
        defer { loop.stop() }
        loop.send(.open(question: "Tea?", choices: ["yes", "no"], seconds: 60))
        loop.send(.vote(choice: "yes"))
        loop.send(.vote(choice: "maybe"))
        #expect(loop.state.votes == ["yes": 1, "no": 0])
        await clock.waitForSleepers(count: 1)
        clock.advance(by: .seconds(60))
        for await state in loop.states where state.status == .closed {
            #expect(state.votes == ["yes": 1, "no": 0])
            break
        }
    }

    @Test func anExportedSessionReplays() async throws {
        func event(_ revision: UInt64, _ origin: String, _ json: String) throws -> SessionFixture.Event {
            SessionFixture.Event(
                revision: revision,
                origin: origin,
                time: nil,
                schemaVersion: 1,
                event: try JSONValue(parsing: Array(json.utf8)),
                stateChecksum: nil
            )
        }
        let fixture = SessionFixture(
            session: "3q2-7wAAAAAAAAAAAAAAAA",
            system: "poll",
            schemaVersion: 1,
            base: .init(revision: 0, schemaVersion: 1, state: try JSONValue(encoding: PollSystem().initialState)),
            events: [
                try event(1, "client", #"{"type":"open","question":"Tea?","choices":["yes","no"],"seconds":60}"#),
                try event(2, "effect", #"{"type":"schedule","closesAt":1767225660000}"#),
                try event(3, "client", #"{"type":"vote","choice":"no"}"#),
                try event(4, "effect", #"{"type":"close"}"#),
                try event(5, "client", #"{"type":"vote","choice":"yes"}"#),
            ],
            checkpoints: []
        )
        let replay = try await FixtureReplay.replay(fixture, through: PollSystem())
        #expect(replay.finalState.status == .closed)
        #expect(replay.finalState.votes == ["yes": 0, "no": 1])
    }

    @Test func theMacrosDeriveTheWireFormatAndTheSchemas() throws {
        let vote = try JSONValue(encoding: PollSystem.Event.vote(choice: "yes"))
        #expect(vote == .object(["type": .string("vote"), "choice": .string("yes")]))
        #expect(PollSystem().clientEventTypes == ["open", "vote"])
        #expect(PollSystem.Event.eventTypes == ["open", "vote", "schedule", "close"])
        guard case .object(let schema) = PollSystem.State.jsonSchema.json,
            case .object(let properties)? = schema["properties"]
        else {
            Issue.record("no object schema")
            return
        }
        #expect(Set(properties.keys) == ["question", "votes", "status", "closesAt", "seconds"])
        #expect(properties["status"] == PollSystem.Status.jsonSchema.json)
    }
}
