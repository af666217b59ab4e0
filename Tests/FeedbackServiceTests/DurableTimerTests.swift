import Foundation
import Testing
import Upstream

/// Durable timers of passive sessions, against the real binary: the journal's deadline index wakes a session that
/// left memory when its timer is due, with nobody asking for it.
@Suite(.serialized, .timeLimit(.minutes(1)))
struct DurableTimerTests {
    private static let woken = #"feedbackhost_session_activations_total{reason="timer"}"#
    private static let passivated = #"feedbackhost_session_passivations_total{reason="idle"}"#

    /// Play Catch: the machine holds the ball for a second; its session is passivated long before that, and the
    /// deadline in the journal's index brings it back to throw the ball, before anyone reads it.
    @Test(arguments: ServiceJournal.allCases)
    func aPassivatedSessionIsWokenWhenItsTimerIsDue(_ journal: ServiceJournal) async throws {
        let place = try journal.place()
        defer { place.remove() }
        let running = try await StreamTestServer.start(["--session-idle-ms", "100"] + place.flags)
        let api = running.api
        let id = try await api.create("catch")
        try await api.post(id, #"{"type":"throwToMachine"}"#)
        #expect(try await api.metric(Self.passivated, reaches: 1))
        #expect(try await api.metric(Self.woken) == 0)
        #expect(try await api.metric(Self.woken, reaches: 1))
        // The timer's firing, measured from its deadline by the woken session's recorder.
        #expect(try await api.metric("feedbackhost_timer_lateness_seconds_count", reaches: 1))
        // Read only now (this request finds the session awake, or passive again after its throw: one activation by
        // request at most). Before it, at most the post's own: on a loaded machine the session may go idle between
        // its creation and the post, which then wakes it (the timer's wake is counted as the timer's).
        let byRequest = #"feedbackhost_session_activations_total{reason="request"}"#
        let before = try await api.metric(byRequest)
        #expect(before <= 1)
        let state = jsonObject(try await api.send("GET", "/v1/sessions/\(id)").bodyText)
        #expect(state["rev"] as? Int == 3)
        #expect((state["state"] as? [String: Any])?["holder"] as? String == "human")
        #expect(try await api.metric(byRequest) <= before + 1)
        await running.stop()
    }

    /// A traffic light nobody watches or asks for: passivated in every phase, woken at every phase's end, so it
    /// has cycled when it is next read (red 4 s, then green 3 s).
    @Test func aTrafficLightLeftAloneKeepsCyclingWhilePassive() async throws {
        let running = try await StreamTestServer.start(["--session-idle-ms", "100"])
        let api = running.api
        let id = try await api.create("traffic-light")
        try await api.post(id, #"{"type":"start"}"#)
        #expect(try await api.metric(Self.woken, reaches: 2))
        let state = jsonObject(try await api.send("GET", "/v1/sessions/\(id)").bodyText)
        let light = state["state"] as? [String: Any]
        #expect(light?["changes"] as? Int ?? 0 >= 2)
        #expect(light?["running"] as? Bool == true)
        #expect(try await api.metric(Self.passivated) >= 2)
        await running.stop()
    }

    /// A timer pending when the server is SIGKILLed: after the restart nobody asks for the session, yet the
    /// journal's deadline index wakes it and the machine throws the ball back, at the deadline journaled before the
    /// crash (not a full delay after the restart).
    /// With PostgreSQL the killed replica still holds the session in the journal; once its lease (1 s here) is not
    /// renewed, the session counts as held by nobody and the next replica wakes it.
    @Test(arguments: ServiceJournal.allCases)
    func aTimerPendingAtASIGKILLFiresAfterTheRestartWithNobodyAsking(_ journal: ServiceJournal) async throws {
        let place = try journal.place()
        defer { place.remove() }
        let flags = place.flags + ["--journal-lease-ms", "1000"]
        let first = try await StreamTestServer.start(flags)
        let id = try await first.api.create("catch")
        try await first.api.post(id, #"{"type":"throwToMachine"}"#)
        // Ignored by the reducer (the machine holds the ball), but its answer waits until everything the session
        // journaled before it is durable: the throw-back's deadline among it.
        let held = try await first.api.post(id, #"{"type":"throwToMachine"}"#)
        let deadline = (held["state"] as? [String: Any])?["throwBackAt"] as? Int
        #expect(deadline != nil)
        kill(first.server.process.processIdentifier, SIGKILL)
        first.server.process.waitUntilExit()
        await first.api.shutdown()

        let second = try await StreamTestServer.start(flags)
        let api = second.api
        #expect(try await api.metric(Self.woken, reaches: 1))
        #expect(try await api.metric(#"feedbackhost_session_activations_total{reason="request"}"#) == 0)
        let state = jsonObject(try await api.send("GET", "/v1/sessions/\(id)").bodyText)
        #expect((state["state"] as? [String: Any])?["holder"] as? String == "human")
        #expect(state["rev"] as? Int == 4)
        await second.stop()
    }
}
