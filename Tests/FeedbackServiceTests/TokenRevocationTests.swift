import CSQLiteFaults
import Foundation
import PostgresFixture
import Testing
import Upstream

/// Revocations follow their session: the token generation lives in the journal with the session, so a revoked token
/// stays refused on the replica that takes the session over (PostgreSQL), after a restart (SQLite), and after an
/// upgrade from a server that kept revocations in `token-revocations.json`.
@Suite(.serialized, .timeLimit(.minutes(2)))
struct TokenRevocationTests {
    private static let counter = #"{"system":"counter"}"#
    private static let increment = #"{"type":"increment"}"#

    /// A session created on `server` with open creation: its id and minted tokens.
    private func create(on server: AuthTestServer) async throws -> (id: String, tokens: [String: String]) {
        let created = try await server.send("POST", "/v1/sessions", body: Self.counter)
        #expect(created.status == 201, "\(created.bodyText)")
        let object = jsonObject(created.bodyText)
        return (try #require(object["id"] as? String), try #require(object["tokens"] as? [String: String]))
    }

    /// Revokes the session's tokens with `admin` on `server`; the fresh tokens.
    private func revoke(_ id: String, with admin: String?, on server: AuthTestServer) async throws -> [String: String] {
        let revoked = try await server.send("DELETE", "/v1/sessions/\(id)/tokens", token: admin)
        #expect(revoked.status == 200, "\(revoked.bodyText)")
        return try #require(jsonObject(revoked.bodyText)["tokens"] as? [String: String])
    }

    private func status(_ server: AuthTestServer, _ method: String, _ id: String, _ token: String?) async throws -> Int
    {
        if method == "POST" {
            return try await server.send("POST", "/v1/sessions/\(id)/events", token: token, body: Self.increment).status
        }
        return try await server.send(method, "/v1/sessions/\(id)", token: token).status
    }

    @Test func aTokenRevokedOnOneReplicaIsRefusedByTheReplicaThatTakesTheSessionOver() async throws {
        let url = try PostgresServer.makeDatabase()
        let a = try await AuthTestServer.start(["--auth-create", "open", "--journal-url", url])
        let b = try await AuthTestServer.start(["--auth-create", "open", "--journal-url", url])

        // Revoked on A; B has never held the session: it reads the generation with the session.
        let first = try await create(on: a)
        let fresh = try await revoke(first.id, with: first.tokens["admin"], on: a)
        let refused = try await b.send("GET", "/v1/sessions/\(first.id)", token: first.tokens["read"])
        #expect(refused.status == 401)
        #expect(refused.bodyText.contains("revoked"))
        #expect(try await status(b, "POST", first.id, first.tokens["post"]) == 401)
        #expect(try await status(b, "GET", first.id, fresh["read"]) == 200)
        #expect(try await status(b, "POST", first.id, fresh["post"]) == 200)
        // B mints fresh tokens too, at the generation it read.
        let mintedOnB = try await b.send("POST", "/v1/sessions/\(first.id)/tokens", token: fresh["admin"])
        let minted = try #require(jsonObject(mintedOnB.bodyText)["tokens"] as? [String: String])
        #expect(try await status(b, "GET", first.id, minted["read"]) == 200)
        #expect(try await status(b, "GET", first.id, first.tokens["admin"]) == 401)

        // B used the tokens first (their grants are cached there, its copy is in memory); A takes the session back
        // and revokes. B's cached grants and its superseded copy do not let the old tokens through.
        let second = try await create(on: a)
        #expect(try await status(b, "GET", second.id, second.tokens["read"]) == 200)
        #expect(try await status(b, "POST", second.id, second.tokens["post"]) == 200)
        let renewed = try await revoke(second.id, with: second.tokens["admin"], on: a)
        // A post reaching B's superseded copy is fenced: nothing of it is kept, and its retries end in 401.
        var post = try await status(b, "POST", second.id, second.tokens["post"])
        var retries = 0
        while post == 503 && retries < 100 {
            try await Task.sleep(for: .milliseconds(50))
            post = try await status(b, "POST", second.id, second.tokens["post"])
            retries += 1
        }
        #expect(post == 401)
        #expect(try await status(b, "GET", second.id, second.tokens["read"]) == 401)
        #expect(try await status(b, "GET", second.id, renewed["read"]) == 200)
        let state = try await b.send("GET", "/v1/sessions/\(second.id)", token: renewed["read"])
        #expect(jsonObject(state.bodyText)["rev"] as? Int == 1)
        // Back on A, the same: the old ones refused, the fresh ones taken.
        #expect(try await status(a, "GET", second.id, second.tokens["read"]) == 401)
        #expect(try await status(a, "POST", second.id, renewed["post"]) == 200)
        await a.stop()
        await b.stop()
    }

    @Test func aRevocationIsKeptInTheSQLiteJournalAcrossRestarts() async throws {
        let data = FileManager.default.temporaryDirectory.appendingPathComponent("revoke-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: data) }
        let first = try await AuthTestServer.start(["--auth-create", "open"], dataDirectory: data.path)
        let created = try await create(on: first)
        let once = try await revoke(created.id, with: created.tokens["admin"], on: first)
        await first.stop()
        #expect(!FileManager.default.fileExists(atPath: data.appendingPathComponent("token-revocations.json").path))

        let second = try await AuthTestServer.start(["--auth-create", "open"], dataDirectory: data.path)
        #expect(try await status(second, "GET", created.id, created.tokens["read"]) == 401)
        #expect(try await status(second, "GET", created.id, once["read"]) == 200)
        let twice = try await revoke(created.id, with: once["admin"], on: second)
        await second.stop()

        let third = try await AuthTestServer.start(["--auth-create", "open"], dataDirectory: data.path)
        #expect(try await status(third, "GET", created.id, once["read"]) == 401)
        #expect(try await status(third, "GET", created.id, twice["read"]) == 200)
        // A deleted session forgets its generation: the id created again starts afresh.
        #expect(try await status(third, "DELETE", created.id, twice["admin"]) == 204)
        await third.stop()
    }

    /// The revocation's answer waits for the journal's verdict: while the journal's writes fail it is a 503 that hands
    /// out no tokens (the client knows it did not take), never a 200.
    @Test func aRevocationTheJournalCannotKeepIsNotAnswered200() async throws {
        #expect(fh_faults_register() == 0)
        let data = FileManager.default.temporaryDirectory.appendingPathComponent("revoke-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: data) }
        let server = try await AuthTestServer.start(
            ["--auth-create", "open", "--journal-probe-ms", "5"],
            dataDirectory: data,
            journalVFS: JournalFaultTests.vfs
        )
        let created = try await create(on: server)
        fh_faults_set(data, FH_FAULT_WRITE)
        let refused = try await server.send(
            "DELETE",
            "/v1/sessions/\(created.id)/tokens",
            token: created.tokens["admin"]
        )
        fh_faults_set(data, FH_FAULT_NONE)
        #expect(refused.status == 503, "\(refused.bodyText)")
        #expect(refused.bodyText.contains("journal-unavailable"))
        #expect(jsonObject(refused.bodyText)["tokens"] == nil)
        #expect(fh_faults_injected(data) > 0)
        await server.stop()
    }

    /// A revocation is committed on its own, not left for a clean shutdown to write: the real binary killed (SIGKILL)
    /// right after the answer comes back up refusing the old tokens. (That the answer waits for the commit is proved by
    /// the fault test above: a kill this soon rarely beats a commit.)
    @Test func aRevocationAnsweredSurvivesAKillRightAfterTheAnswer() throws {
        let directory = TemporaryDataDirectory()
        defer { directory.remove() }
        let flags = try directory.authFlags()
        let first = try RunningServer(arguments: flags)
        defer { first.stop() }
        let created = try postJSON("\(first.base)/v1/sessions", Self.counter)
        let id = try #require(created.json["id"] as? String)
        let old = try #require(created.json["tokens"] as? [String: String])
        let revoked = try curl([
            "-X", "DELETE", "-H", "Authorization: Bearer \(old["admin"]!)", "\(first.base)/v1/sessions/\(id)/tokens",
        ])
        #expect(revoked.status == 200)
        let fresh = try #require(revoked.json["tokens"] as? [String: String])
        kill(first.process.processIdentifier, SIGKILL)
        first.process.waitUntilExit()

        let second = try RunningServer(arguments: flags)
        defer { second.stop() }
        let path = "\(second.base)/v1/sessions/\(id)"
        #expect(try curl(["-H", "Authorization: Bearer \(old["read"]!)", path]).status == 401)
        #expect(try curl(["-H", "Authorization: Bearer \(fresh["read"]!)", path]).status == 200)
    }

    @Test func revocationsOfAnEarlierVersionsFileAreAdoptedIntoTheJournal() async throws {
        let data = FileManager.default.temporaryDirectory.appendingPathComponent("revoke-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: data) }
        let first = try await AuthTestServer.start(["--auth-create", "open"], dataDirectory: data.path)
        let revoked = try await create(on: first)
        let untouched = try await create(on: first)
        await first.stop()
        // What the earlier version wrote at a revocation: session id to generation, rewritten whole.
        let file = data.appendingPathComponent("token-revocations.json")
        try Data(#"{"\#(revoked.id)":2,"AAAAAAAAAAAAAAAAAAAAAA":5,"not an id":1}"#.utf8).write(to: file)

        let second = try await AuthTestServer.start(["--auth-create", "open"], dataDirectory: data.path)
        #expect(try await status(second, "GET", revoked.id, revoked.tokens["read"]) == 401)
        #expect(try await status(second, "GET", untouched.id, untouched.tokens["read"]) == 200)
        #expect(!FileManager.default.fileExists(atPath: file.path))
        #expect(FileManager.default.fileExists(atPath: file.path + ".adopted"))
        // A backend admin token mints the session's tokens at the adopted generation.
        let admin = try await second.sign(sid: revoked.id, scope: "admin")
        let minted = try await second.send("POST", "/v1/sessions/\(revoked.id)/tokens", token: admin)
        let fresh = try #require(jsonObject(minted.bodyText)["tokens"] as? [String: String])
        #expect(try await status(second, "GET", revoked.id, fresh["read"]) == 200)
        await second.stop()

        // The journal holds it now: without the file, after another restart, the same.
        let third = try await AuthTestServer.start(["--auth-create", "open"], dataDirectory: data.path)
        #expect(try await status(third, "GET", revoked.id, revoked.tokens["read"]) == 401)
        #expect(try await status(third, "GET", revoked.id, fresh["read"]) == 200)
        await third.stop()

        // A file that cannot be read stops the start (its revocations would be lost), saying what to do.
        try Data("{not json".utf8).write(to: file)
        await #expect {
            _ = try await AuthTestServer.start(["--auth-create", "open"], dataDirectory: data.path)
        } throws: { error in
            "\(error)".contains("token-revocations.json") && "\(error)".contains("remove it")
        }
    }
}
