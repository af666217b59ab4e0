import Foundation
import JWTKit
import Testing
import Upstream

/// `--auth jwt`: who may create sessions, backend JWTs signed with HS256 and ES256, server-minted tokens and their
/// revocation, and a stream closed with `reauth` at its token's expiry.
@Suite(.timeLimit(.minutes(1)))
struct AuthTokenTests {
    @Test func creatingNeedsACreateTokenForTheSystem() async throws {
        let server = try await AuthTestServer.start()
        let body = #"{"system":"counter"}"#
        #expect(try await server.send("POST", "/v1/sessions", body: body).status == 401)
        let readOnly = try await server.sign(system: "counter", scope: "read")
        #expect(try await server.send("POST", "/v1/sessions", token: readOnly, body: body).status == 403)
        let otherSystem = try await server.sign(system: "notes", scope: "create")
        #expect(try await server.send("POST", "/v1/sessions", token: otherSystem, body: body).status == 403)
        // A create token for one id: PUT with that id only.
        let id = "3q2-7wAAAAAAAAAAAAAAAA"
        let forID = try await server.sign(sid: id, scope: "create")
        #expect(try await server.send("POST", "/v1/sessions", token: forID, body: body).status == 403)
        #expect(
            try await server.send("PUT", "/v1/sessions/AAAAAAAAAAAAAAAAAAAAAA", token: forID, body: body).status == 403
        )
        let created = try await server.send("PUT", "/v1/sessions/\(id)", token: forID, body: body)
        #expect(created.status == 201)
        #expect((jsonObject(created.bodyText)["tokens"] as? [String: String])?.count == 3)
        // Repeating the PUT answers the session, without tokens; without a token it is refused.
        let again = try await server.send("PUT", "/v1/sessions/\(id)", token: forID, body: body)
        #expect(again.status == 200)
        #expect(jsonObject(again.bodyText)["tokens"] == nil)
        #expect(try await server.send("PUT", "/v1/sessions/\(id)", body: body).status == 401)
        await server.stop()
    }

    @Test func openCreationAnswersWithTheSessionsTokens() async throws {
        let server = try await AuthTestServer.start(["--auth-create", "open"])
        let created = try await server.send("POST", "/v1/sessions", body: #"{"system":"counter"}"#)
        #expect(created.status == 201)
        let object = jsonObject(created.bodyText)
        let id = try #require(object["id"] as? String)
        let tokens = try #require(object["tokens"] as? [String: String])
        #expect(object["tokens_expire_at"] is Int)
        #expect(try await server.send("GET", "/v1/sessions/\(id)").status == 401)
        #expect(try await server.send("GET", "/v1/sessions/\(id)", token: tokens["read"]).status == 200)
        // Anyone may create, but not take over an existing session by repeating its PUT.
        #expect(try await server.send("PUT", "/v1/sessions/\(id)", body: #"{"system":"counter"}"#).status == 401)
        await server.stop()
    }

    @Test(arguments: ["hs", "es"])
    func backendTokensSignedWithHS256AndES256AreAccepted(kid: String) async throws {
        let server = try await AuthTestServer.start()
        let create = try await server.sign(kid: kid, system: "counter", scope: "create")
        let created = try await server.send("POST", "/v1/sessions", token: create, body: #"{"system":"counter"}"#)
        #expect(created.status == 201)
        let id = try #require(jsonObject(created.bodyText)["id"] as? String)
        let post = try await server.sign(kid: kid, sid: id, scope: "post")
        let event = #"{"type":"increment"}"#
        #expect(try await server.send("POST", "/v1/sessions/\(id)/events", token: post, body: event).status == 200)
        // The same token again, now from the cache.
        #expect(try await server.send("POST", "/v1/sessions/\(id)/events", token: post, body: event).status == 200)
        #expect(try await server.send("GET", "/v1/sessions/\(id)", token: post).status == 200)
        #expect(try await server.send("DELETE", "/v1/sessions/\(id)", token: post).status == 403)
        // A system-wide admin token of the backend.
        let admin = try await server.sign(kid: kid, system: "counter", scope: "admin")
        #expect(try await server.send("DELETE", "/v1/sessions/\(id)", token: admin).status == 204)
        await server.stop()
    }

    /// A server key made as the README says (`head -c 32 /dev/urandom`) may end in a carriage return or a newline
    /// byte: the server signs and verifies with the same bytes, so the tokens it mints are accepted (a key ending in
    /// `\r` was trimmed once more for verification than for signing, and its tokens were refused).
    @Test(arguments: [[0x0D], [0x0A], [0x0D, 0x0A], [0x0A, 0x0A]] as [[UInt8]])
    func theServersOwnTokensAreAcceptedWhateverItsKeyEndsWith(_ ending: [UInt8]) async throws {
        let key = (0..<(ending.count == 1 ? 31 : 32)).map { _ in UInt8.random(in: 0x20...0x7E) } + ending
        let server = try await AuthTestServer.start(["--auth-create", "open"], serverKey: key)
        let created = try await server.send("POST", "/v1/sessions", body: #"{"system":"counter"}"#)
        #expect(created.status == 201)
        let object = jsonObject(created.bodyText)
        let id = try #require(object["id"] as? String)
        let post = try #require((object["tokens"] as? [String: String])?["post"])
        let posted = try await server.send(
            "POST",
            "/v1/sessions/\(id)/events",
            token: post,
            body: #"{"type":"increment"}"#
        )
        #expect(posted.status == 200)
        await server.stop()
    }

    @Test func revokingASessionsTokensRefusesTheOldOnes() async throws {
        let server = try await AuthTestServer.start(["--auth-create", "open"])
        let created = jsonObject(try await server.send("POST", "/v1/sessions", body: #"{"system":"counter"}"#).bodyText)
        let id = try #require(created["id"] as? String)
        let old = try #require(created["tokens"] as? [String: String])
        let stream = try server.reader("/v1/sessions/\(id)/stream", headers: ["Authorization: Bearer \(old["read"]!)"])
        #expect(try await stream.nextEvent().type == "snapshot")
        let revoked = try await server.send("DELETE", "/v1/sessions/\(id)/tokens", token: old["admin"])
        #expect(revoked.status == 200)
        // Its open streams are told to come back with a token, and the old one no longer opens them.
        #expect(try await stream.nextEvent().type == "reauth")
        await stream.disconnect()
        let reopened = try server.reader(
            "/v1/sessions/\(id)/stream",
            headers: ["Authorization: Bearer \(old["read"]!)"]
        )
        #expect(try await reopened.head().status == 401)
        await reopened.disconnect()
        let fresh = try #require(jsonObject(revoked.bodyText)["tokens"] as? [String: String])
        let refused = try await server.send("GET", "/v1/sessions/\(id)", token: old["read"])
        #expect(refused.status == 401)
        #expect(refused.bodyText.contains("revoked"))
        #expect(try await server.send("GET", "/v1/sessions/\(id)", token: fresh["read"]).status == 200)
        await server.stop()
    }

    @Test func aStreamGetsReauthAtItsTokensExpiryAndAFreshTokenResumesIt() async throws {
        let server = try await AuthTestServer.start()
        let create = try await server.sign(system: "counter", scope: "create")
        let created = jsonObject(
            try await server.send("POST", "/v1/sessions", token: create, body: #"{"system":"counter"}"#).bodyText
        )
        let id = try #require(created["id"] as? String)
        let admin = try #require((created["tokens"] as? [String: String])?["admin"])
        let shortLived = try await server.sign(sid: id, scope: "read", lifetime: 1.5)
        let stream = try server.reader("/v1/sessions/\(id)/stream?mode=patch&access_token=\(shortLived)")
        let first = try await stream.nextEvent()
        #expect(first.type == "snapshot")
        let reauth = try await stream.nextEvent()
        #expect(reauth.type == "reauth")
        #expect(try await stream.next() == .closed)
        await stream.disconnect()
        // One event while away; the reconnect (a fresh token in the cookie) gets it as one patch.
        let event = #"{"type":"increment"}"#
        #expect(try await server.send("POST", "/v1/sessions/\(id)/events", token: admin, body: event).status == 200)
        let fresh = try await server.sign(sid: id, scope: "read")
        let resumed = try server.reader(
            "/v1/sessions/\(id)/stream?mode=patch",
            headers: ["Cookie: feedbackhost_token=\(fresh)", "Last-Event-ID: \(first.id)"]
        )
        let next = try await resumed.nextEvent()
        #expect(next.type == "patch")
        await resumed.disconnect()
        let log = server.loggedText
        #expect(!log.contains(shortLived) && !log.contains(fresh) && !log.contains(admin))
        await server.stop()
    }

    @Test func revocationsSurviveARestartWithADataDirectory() async throws {
        let data = FileManager.default.temporaryDirectory.appendingPathComponent("auth-data-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: data) }
        let first = try await AuthTestServer.start(["--auth-create", "open"], dataDirectory: data.path)
        let created = jsonObject(try await first.send("POST", "/v1/sessions", body: #"{"system":"counter"}"#).bodyText)
        let id = try #require(created["id"] as? String)
        let old = try #require(created["tokens"] as? [String: String])
        let revoked = try await first.send("DELETE", "/v1/sessions/\(id)/tokens", token: old["admin"])
        let fresh = try #require(jsonObject(revoked.bodyText)["tokens"] as? [String: String])
        await first.stop()
        let second = try await AuthTestServer.start(["--auth-create", "open"], dataDirectory: data.path)
        #expect(try await second.send("GET", "/v1/sessions/\(id)", token: old["read"]).status == 401)
        #expect(try await second.send("GET", "/v1/sessions/\(id)", token: fresh["read"]).status == 200)
        await second.stop()
    }

    @Test func tokensOfAPassiveSessionAreCheckedAsTheSessionComesBack() async throws {
        let data = FileManager.default.temporaryDirectory.appendingPathComponent("auth-data-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: data) }
        let server = try await AuthTestServer.start(
            ["--auth-create", "open", "--session-idle-ms", "40"],
            dataDirectory: data.path
        )
        let created = jsonObject(try await server.send("POST", "/v1/sessions", body: #"{"system":"counter"}"#).bodyText)
        let id = try #require(created["id"] as? String)
        let old = try #require(created["tokens"] as? [String: String])
        let revoked = try await server.send("DELETE", "/v1/sessions/\(id)/tokens", token: old["admin"])
        let fresh = try #require(jsonObject(revoked.bodyText)["tokens"] as? [String: String])
        let system = try await server.sign(system: "counter", scope: "read")
        for round in 1...2 {
            while try await server.metric(#"feedbackhost_session_passivations_total{reason="idle"}"#) < Double(round) {
                try await Task.sleep(for: .milliseconds(20))
            }
            #expect(try await server.send("GET", "/v1/sessions/\(id)", token: old["read"]).status == 401)
            #expect(try await server.send("GET", "/v1/sessions/\(id)", token: system).status == 200)
        }
        #expect(try await server.send("GET", "/v1/sessions/\(id)", token: fresh["read"]).status == 200)
        await server.stop()
    }

    @Test func keysFromAJWKSAndAnRS256PublicKeyAreAccepted() async throws {
        let es256 = ES256PrivateKey()
        let point = try #require(es256.publicKey.parameters)
        let jwks =
            #"{"keys":[{"kty":"EC","crv":"P-256","kid":"jw","alg":"ES256","x":"\#(point.x)","y":"\#(point.y)"}]}"#
        let rsaPEM = try await offPool {
            try Self.openssl(["genpkey", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:2048"])
        }
        let rsa = try Insecure.RSA.PrivateKey(pem: rsaPEM)
        let server = try await AuthTestServer.start(
            keyFiles: ["keys.json": jwks, "rs.pem": rsa.publicKey.pemRepresentation]
        )
        await server.signers.add(ecdsa: es256, kid: "jw")
        await server.signers.add(rsa: rsa, digestAlgorithm: .sha256, kid: "rs")
        for kid in ["jw", "rs"] {
            let create = try await server.sign(kid: kid, system: "counter", scope: "create")
            let created = try await server.send("POST", "/v1/sessions", token: create, body: #"{"system":"counter"}"#)
            #expect(created.status == 201, "\(kid)")
            let id = try #require(jsonObject(created.bodyText)["id"] as? String)
            let read = try await server.sign(kid: kid, sid: id, scope: "read")
            #expect(try await server.send("GET", "/v1/sessions/\(id)", token: read).status == 200, "\(kid)")
        }
        await server.stop()
    }

    /// `openssl ARGS`'s standard output.
    static func openssl(_ arguments: [String]) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/openssl")
        process.arguments = arguments
        let pipe = Pipe()
        process.standardOutput = pipe
        try process.run()
        let output = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return String(decoding: output, as: UTF8.self)
    }
}
