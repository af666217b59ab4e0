import Foundation
import Testing
import Upstream

/// A session's streams follow its states only while someone watches (and for `stream.linger.ms` after): the
/// real binary stops encoding for a session nobody streams, and a later stream starts from the current state.
@Suite(.serialized, .timeLimit(.minutes(1)))
struct StreamLingerTests {
    /// `feedbackhost_stream_sessions`: sessions whose states the streams follow.
    private func followed(_ running: StreamTestServer) async throws -> Int? {
        let metrics = try await running.api.send("GET", "/metrics").bodyText
        let line = metrics.split(separator: "\n").first { $0.hasPrefix("feedbackhost_stream_sessions ") }
        return line.flatMap { Int(Double($0.split(separator: " ")[1]) ?? -1) }
    }

    /// Polls `followed` until it is `expected` (the linger ends on the server's own timer).
    private func followed(_ running: StreamTestServer, becomes expected: Int) async throws -> Bool {
        for _ in 0..<200 {
            if try await followed(running) == expected { return true }
            try await Task.sleep(for: .milliseconds(25))
        }
        return false
    }

    @Test func aSessionNobodyWatchesIsLetGoAndALaterStreamStartsFromItsCurrentState() async throws {
        let running = try await StreamTestServer.start(["--stream-linger-ms", "100"])
        let id = try await running.api.create()
        let reader = try running.reader("/v1/sessions/\(id)/stream?mode=patch")
        let first = try await reader.nextEvent()
        #expect(first.type == "snapshot")
        #expect(try await followed(running) == 1)
        await reader.disconnect()
        #expect(try await followed(running, becomes: 0))

        // Revisions the streams did not follow.
        for _ in 1...3 { try await running.api.post(id, #"{"type":"increment"}"#) }

        // The hub that knew revision 0 is gone: a client resuming from it gets the current state as a snapshot.
        let resumed = try running.reader(
            "/v1/sessions/\(id)/stream?mode=patch",
            headers: ["Last-Event-ID: \(first.id)"]
        )
        let snapshot = try await resumed.nextEvent()
        #expect(snapshot.type == "snapshot")
        #expect(jsonObject(snapshot.data)["rev"] as? Int == 3)
        #expect(try await followed(running) == 1)
        try await running.api.post(id, #"{"type":"increment"}"#)
        #expect(jsonObject(try await resumed.nextEvent().data)["rev"] as? Int == 4)
        await running.stop()
    }

    /// An open stream keeps its session in memory past `session.idle.ms`: a watched session and an unwatched one
    /// are created together; the unwatched one is passivated, the watched one stays active and its stream open.
    /// Once the stream closes, the idle time starts at the end of the linger, and the session is passivated after
    /// it; the next request brings it back from the journal as it was.
    @Test func anOpenStreamKeepsItsSessionActivePastTheIdleTime() async throws {
        let running = try await StreamTestServer.start(["--session-idle-ms", "300", "--stream-linger-ms", "100"])
        let passivations = #"feedbackhost_session_passivations_total{reason="idle"}"#
        let watched = try await running.api.create()
        let unwatched = try await running.api.create()
        let reader = try running.reader("/v1/sessions/\(watched)/stream")
        #expect(try await reader.nextEvent().type == "snapshot")
        #expect(try await running.api.metric(passivations, reaches: 1))
        #expect(try await running.api.metric(passivations) == 1)
        #expect(try await running.api.metric("feedbackhost_sessions") == 1)
        // Stays active over several more idle times (no request touches it meanwhile; metrics are not the session).
        try await Task.sleep(for: .milliseconds(900))
        #expect(try await running.api.metric(passivations) == 1)
        try await running.api.post(watched, #"{"type":"increment"}"#)
        #expect(jsonObject(try await reader.nextEvent().data)["rev"] as? Int == 1)

        await reader.disconnect()
        #expect(try await running.api.metric(passivations, reaches: 2))
        #expect(try await running.api.metric(passivations) == 2)
        #expect(try await running.api.metric("feedbackhost_sessions") == 0)
        let back = try await running.api.send("GET", "/v1/sessions/\(watched)")
        #expect(back.status == 200)
        #expect(jsonObject(back.bodyText)["rev"] as? Int == 1)
        #expect(try await running.api.send("GET", "/v1/sessions/\(unwatched)").status == 200)
        #expect(try await running.api.metric(#"feedbackhost_session_activations_total{reason="request"}"#) == 2)
        await running.stop()
    }

    @Test func aClientThatReconnectsWithinTheLingerResumesWithAPatch() async throws {
        // The default linger (30 s) outlasts this test many times over.
        let running = try await StreamTestServer.start()
        let id = try await running.api.create()
        let reader = try running.reader("/v1/sessions/\(id)/stream?mode=patch")
        let first = try await reader.nextEvent()
        await reader.disconnect()
        try await running.api.post(id, #"{"type":"increment"}"#)
        let resumed = try running.reader(
            "/v1/sessions/\(id)/stream?mode=patch",
            headers: ["Last-Event-ID: \(first.id)"]
        )
        let patch = try await resumed.nextEvent()
        #expect(patch.type == "patch")
        #expect(jsonObject(patch.data)["base"] as? Int == 0)
        #expect(jsonObject(patch.data)["rev"] as? Int == 1)
        #expect(try await followed(running) == 1)
        await running.stop()
    }
}
