import Foundation
import Testing
import Upstream

/// Forks (issue 32) against the real binary with the manual clock: a fork of a traffic light starts from the state at
/// the revision asked for, with its effects paused (no timer fires however far the clock moves) until a client
/// resumes them, and then its first due timer fires. The pause is journaled: it holds across a passivation and a
/// restart, with SQLite and with PostgreSQL.
@Suite(.serialized, .timeLimit(.minutes(2)))
struct ForkTests {
    private static let passivated = #"feedbackhost_session_passivations_total{reason="idle"}"#

    /// A traffic light started and scheduled (revision 2: `start`, then its red phase's deadline).
    private static func runningLight(_ api: SessionAPIClient) async throws -> String {
        let id = try await api.create("traffic-light")
        try await api.post(id, #"{"type":"start"}"#)
        // Answers once the light's first deadline is in its state (and journaled: the next answer waits for it).
        try await api.advance(milliseconds: 0)
        let light = try await api.state(id)
        #expect(light["phase"] as? String == "red")
        #expect(light["deadline"] as? Int == Int(ManualClockTests.start) + 4000)
        return id
    }

    private static func fork(_ api: SessionAPIClient, _ id: String, at revision: Int) async throws -> String {
        let forked = try await api.send("POST", "/v1/sessions/\(id)/forks", body: #"{"rev":\#(revision)}"#)
        #expect(forked.status == 201, "\(forked.bodyText)")
        let object = jsonObject(forked.bodyText)
        let fork = object["id"] as? String ?? ""
        #expect(!fork.isEmpty && fork != id)
        #expect(forked.headers["location"] == "/v1/sessions/\(fork)")
        #expect(forked.headers["etag"] != nil)
        #expect(object["rev"] as? Int == 0)
        #expect(object["system"] as? String == "traffic-light")
        #expect((object["forkOf"] as? [String: Any])?["id"] as? String == id)
        #expect((object["forkOf"] as? [String: Any])?["rev"] as? Int == revision)
        #expect(object["effects"] as? String == "paused")
        return fork
    }

    private static func feedbacks(_ api: SessionAPIClient, _ id: String) async throws -> String? {
        jsonObject(try await api.send("GET", "/v1/sessions/\(id)/containment").bodyText)["feedbacks"] as? String
    }

    @Test(arguments: ServiceJournal.allCases)
    func aForkStartsPausedAndItsFirstTimerFiresOnceResumed(_ journal: ServiceJournal) async throws {
        let place = try journal.place()
        defer { place.remove() }
        let running = try await ManualClockTests.startServer(place.flags)
        let api = running.api
        let id = try await Self.runningLight(api)
        let fork = try await Self.fork(api, id, at: 2)
        #expect(try await Self.feedbacks(api, fork) == "paused")
        var light = try await api.state(fork)
        #expect(light["phase"] as? String == "red")
        #expect(light["running"] as? Bool == true)
        #expect(light["deadline"] as? Int == Int(ManualClockTests.start) + 4000)
        // Past the deadline: the original's timer fires, the fork's does not.
        let clock = try await api.advance(milliseconds: 5000)
        #expect(clock["timersFired"] as? Int == 1)
        #expect(try await api.state(id)["phase"] as? String == "green")
        light = try await api.state(fork)
        #expect(light["phase"] as? String == "red")
        #expect(light["changes"] as? Int == 0)
        // Resumed: its first due timer fires (its deadline has passed, so at once).
        let resumed = try await api.send("POST", "/v1/sessions/\(fork)/effects/resume")
        #expect(resumed.status == 200, "\(resumed.bodyText)")
        #expect(try await Self.feedbacks(api, fork) == "running")
        try await api.advance(milliseconds: 0)
        light = try await api.state(fork)
        #expect(light["phase"] as? String == "green")
        #expect(light["changes"] as? Int == 1)
        // Nothing left to resume.
        let again = try await api.send("POST", "/v1/sessions/\(fork)/effects/resume")
        #expect(again.status == 409)
        #expect(again.headers["content-type"]?.hasPrefix("application/problem+json") == true)
        await running.stop()
    }

    @Test(arguments: ServiceJournal.allCases)
    func aPausedForkStaysPausedAcrossAPassivationAndARestart(_ journal: ServiceJournal) async throws {
        let place = try journal.place()
        defer { place.remove() }
        let flags = place.flags + ["--session-idle-ms", "100"]
        let first = try await ManualClockTests.startServer(flags)
        let id = try await Self.runningLight(first.api)
        let fork = try await Self.fork(first.api, id, at: 2)
        // Both leave memory; the clock passes the deadline their journal holds: only the original is woken.
        #expect(try await first.api.metric(Self.passivated, reaches: 2))
        try await first.api.advance(milliseconds: 5000)
        #expect(try await first.api.state(id)["phase"] as? String == "green")
        #expect(try await first.api.state(fork)["changes"] as? Int == 0)
        #expect(try await Self.feedbacks(first.api, fork) == "paused")
        await first.stop()

        let second = try await ManualClockTests.startServer(flags)
        let api = second.api
        try await api.advance(milliseconds: 5000)
        var light = try await api.state(fork)
        #expect(light["phase"] as? String == "red")
        #expect(light["changes"] as? Int == 0)
        #expect(try await Self.feedbacks(api, fork) == "paused")
        #expect(try await api.send("POST", "/v1/sessions/\(fork)/effects/resume").status == 200)
        try await api.advance(milliseconds: 0)
        light = try await api.state(fork)
        #expect(light["phase"] as? String == "green")
        #expect(light["changes"] as? Int == 1)
        await second.stop()

        // Resumed for good: a third start finds it running.
        let third = try await ManualClockTests.startServer(flags)
        #expect(try await Self.feedbacks(third.api, fork) == "running")
        await third.stop()
    }

    @Test func aForkOfARevisionNoLongerKeptIsGoneAndABadBodyIsRefused() async throws {
        let place = try ServiceJournal.sqlite.place()
        defer { place.remove() }
        let running = try await StreamTestServer.start(place.flags + ["--history-retention", "events:50"])
        let api = running.api
        let id = try await api.create()
        let batch = #"{"events":[\#(Array(repeating: #"{"type":"increment"}"#, count: 100).joined(separator: ","))]}"#
        for _ in 0..<3 { try await api.post(id, batch) }
        let gone = try await api.send("POST", "/v1/sessions/\(id)/forks", body: #"{"rev":99}"#)
        #expect(gone.status == 410, "\(gone.bodyText)")
        #expect(gone.headers["content-type"]?.hasPrefix("application/problem+json") == true)
        #expect(gone.bodyText.contains("revision-not-kept"))
        let beyond = try await api.send("POST", "/v1/sessions/\(id)/forks", body: #"{"rev":301}"#)
        #expect(beyond.status == 404)
        #expect(beyond.bodyText.contains("revision-not-found"))
        let huge = try await api.send("POST", "/v1/sessions/\(id)/forks", body: #"{"rev":18446744073709551615}"#)
        #expect(huge.status == 404, "\(huge.bodyText)")
        for body in [#"{"rev":-1}"#, #"{"rev":"ten"}"#, #"{}"#, #"{"rev":1,"at":2}"#, "[]"] {
            let refused = try await api.send("POST", "/v1/sessions/\(id)/forks", body: body)
            #expect(refused.status == 400, "\(body): \(refused.bodyText)")
            #expect(refused.headers["content-type"]?.hasPrefix("application/problem+json") == true)
        }
        #expect(try await api.send("POST", "/v1/sessions/\(id)/forks", body: "{").status == 400)
        let kept = try await api.send("POST", "/v1/sessions/\(id)/forks", body: #"{"rev":250}"#)
        #expect(kept.status == 201)
        let fork = jsonObject(kept.bodyText)
        #expect((fork["state"] as? [String: Any])?["count"] as? Int == 250)
        // Posting to a paused fork works: only its effects wait.
        let posted = try await api.post(fork["id"] as? String ?? "", #"{"type":"increment"}"#)
        #expect((posted["state"] as? [String: Any])?["count"] as? Int == 251)
        await running.stop()

        // Off with the inspector.
        let off = try await StreamTestServer.start(place.flags + ["--inspector", "off"])
        let refused = try await off.api.send("POST", "/v1/sessions/\(id)/forks", body: #"{"rev":250}"#)
        #expect(refused.status == 404)
        #expect(refused.bodyText.contains("inspector-off"))
        #expect(try await off.api.send("POST", "/v1/sessions/\(id)/effects/resume").status == 404)
        await off.stop()
    }

    /// Forking and resuming need admin: inspect reads a session's history but cannot fork it or resume a fork.
    @Test func theScopeMatrixOfForksAndResumes() async throws {
        let directory = TemporaryDataDirectory()
        defer { directory.remove() }
        let server = try await AuthTestServer.start(dataDirectory: directory.path)
        let create = try await server.sign(system: "counter", scope: "create")
        let created = try await server.send("POST", "/v1/sessions", token: create, body: #"{"system":"counter"}"#)
        #expect(created.status == 201, "\(created.bodyText)")
        let id = jsonObject(created.bodyText)["id"] as? String ?? ""
        let minted = jsonObject(created.bodyText)["tokens"] as? [String: String] ?? [:]
        let post = try await server.send(
            "POST",
            "/v1/sessions/\(id)/events",
            token: minted["post"],
            body: #"{"type":"increment"}"#
        )
        #expect(post.status == 200)
        let forks = "/v1/sessions/\(id)/forks"
        #expect(try await server.send("POST", forks, body: #"{"rev":1}"#).status == 401)
        for scope in ["read", "post", "inspect"] {
            let token = try await server.sign(sid: id, scope: scope)
            #expect(try await server.send("POST", forks, token: token, body: #"{"rev":1}"#).status == 403, "\(scope)")
        }
        #expect(try await server.send("POST", forks, token: minted["read"], body: #"{"rev":1}"#).status == 403)
        let inspect = try await server.sign(sid: id, scope: "inspect")
        #expect(try await server.send("GET", "/v1/sessions/\(id)/states/1", token: inspect).status == 200)
        // Admin forks; the fork answers as a create does, its own tokens minted.
        let admin = try await server.sign(sid: id, scope: "admin")
        let forked = try await server.send("POST", forks, token: admin, body: #"{"rev":1}"#)
        #expect(forked.status == 201, "\(forked.bodyText)")
        let fork = jsonObject(forked.bodyText)
        let forkID = fork["id"] as? String ?? ""
        let forkTokens = fork["tokens"] as? [String: String] ?? [:]
        #expect(forkTokens["admin"] != nil)
        #expect((fork["state"] as? [String: Any])?["count"] as? Int == 1)
        #expect(try await server.send("POST", forks, token: minted["admin"], body: #"{"rev":0}"#).status == 201)
        // Resuming the fork: inspect (of the fork) cannot, its admin can.
        let resume = "/v1/sessions/\(forkID)/effects/resume"
        let inspectFork = try await server.sign(sid: forkID, scope: "inspect")
        #expect(try await server.send("POST", resume, token: inspectFork).status == 403)
        #expect(try await server.send("POST", resume, token: forkTokens["read"]).status == 403)
        // The source's admin token does not cover the fork, a new session.
        #expect(try await server.send("POST", resume, token: admin).status == 403)
        #expect(try await server.send("POST", resume, token: forkTokens["admin"]).status == 200)
        await server.stop()
    }
}
