import FeedbackJSON
import FeedbackService
import FeedbackTesting
import Foundation
import Logging
import SessionJournal
import SystemKit
import Systems
import Testing
import Upstream

/// `GET /v1/sessions/{id}/export` over a real socket, and `verify.on.start` holding `/readyz` at 503 until this
/// build is shown to reproduce the journal.
@Suite(.timeLimit(.minutes(2)))
struct ExportRouteTests {
    @Test func aSessionExportedOverHTTPReplaysToItsStateAndUnknownIdsAre404() async throws {
        let directory = TemporaryDataDirectory()
        defer { directory.remove() }
        let server = try JournaledServer.start(
            ["--data-dir", directory.path, "--verify-on-start"],
            systems: [HostedSystem(CounterSystem())]
        )
        #expect(try await server.readinessAfterVerification().0 == 200)
        let id = try await server.api.create()
        for event in [#"{"type":"increment"}"#, #"{"type":"add","amount":41}"#, #"{"type":"decrement"}"#] {
            try await server.api.post(id, event)
        }
        let answer = try await server.api.send("GET", "/v1/sessions/\(id)/export")
        #expect(answer.status == 200)
        let fixture = try SessionFixture(json: try JSONValue(parsing: answer.body))
        #expect(fixture.session == id)
        #expect(fixture.events.map(\.origin) == ["client", "client", "client"])
        #expect(fixture.events.allSatisfy { $0.time != nil && $0.stateChecksum != nil })
        let replay = try await FixtureReplay.replay(fixture, through: CounterSystem())
        #expect(replay.finalState.count == 41)
        #expect(replay.checkedChecksums == 3)
        let unknown = try await server.api.send("GET", "/v1/sessions/\(JournaledSessions.id(404))/export")
        #expect(unknown.status == 404)
        await server.stop()

        let memoryOnly = try JournaledServer.start(["--data-dir", "none"], systems: [HostedSystem(CounterSystem())])
        let session = try await memoryOnly.api.create()
        let refused = try await memoryOnly.api.send("GET", "/v1/sessions/\(session)/export")
        #expect(refused.status == 409)
        #expect(refused.bodyText.contains("export-unavailable"))
        await memoryOnly.stop()
    }

    @Test func aBuildThatDoesNotReproduceTheJournalIsNeverReady() async throws {
        let directory = TemporaryDataDirectory()
        defer { directory.remove() }
        let sessions = JournaledSessions.operations(count: 50, maxOperations: 20, seed: 5)
        do {
            let journal = try JournaledSessions.open(directory.path, history: 1000)
            defer { journal.close() }
            try await JournaledSessions.write(
                sessions,
                system: VersionedCounter.V2(),
                event: VersionedCounter.V2.Event.init,
                into: journal,
                snapshotInterval: 100
            )
        }
        let withDecrement = sessions.filter { $0.contains(.decrement) }.count
        #expect(withDecrement > 0)
        let wrong = try JournaledServer.start(
            ["--data-dir", directory.path, "--verify-on-start"],
            systems: [HostedSystem(VersionedCounter.DecrementsTwice())]
        )
        let (status, body) = try await wrong.readinessAfterVerification()
        #expect(status == 503)
        #expect(body.contains("verification-failed"))
        #expect(body.contains("\(withDecrement) diverged"))
        await wrong.stop()

        let tolerant = try JournaledServer.start(
            ["--data-dir", directory.path, "--verify-on-start", "--verify-max-divergent", "\(withDecrement)"],
            systems: [HostedSystem(VersionedCounter.DecrementsTwice())]
        )
        #expect(try await tolerant.readinessAfterVerification().0 == 200)
        await tolerant.stop()
    }
}
