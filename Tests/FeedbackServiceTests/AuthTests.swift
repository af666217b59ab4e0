import FeedbackService
import Foundation
import JWTKit
import Testing
import Upstream

/// `--auth jwt` end to end: every session route against missing, wrong, foreign, weaker, expired and forged tokens,
/// minted by the server and signed by a backend with HS256 and with ES256; nothing changes, and the log never holds
/// a token. (Deployment/checks search the real binary's standard error, access log included, the same way.)
@Suite(.timeLimit(.minutes(1)))
struct AuthTests {
    /// A session created with a backend `create` token: its id and the tokens the server minted for it.
    struct Created {
        let id: String
        let tokens: [String: String]
    }

    func create(_ server: AuthTestServer, system: String = "counter") async throws -> Created {
        let token = try await server.sign(system: system, scope: "create")
        let response = try await server.send("POST", "/v1/sessions", token: token, body: #"{"system":"\#(system)"}"#)
        let object = jsonObject(response.bodyText)
        #expect(response.status == 201, "\(response.bodyText)")
        return Created(id: object["id"] as? String ?? "", tokens: object["tokens"] as? [String: String] ?? [:])
    }

    func rev(_ server: AuthTestServer, _ created: Created) async throws -> Int? {
        let response = try await server.send("GET", "/v1/sessions/\(created.id)", token: created.tokens["admin"])
        return jsonObject(response.bodyText)["rev"] as? Int
    }

    /// An id no test creates.
    static let unusedID = "3q2-7wAAAAAAAAAAAAAAAA"

    /// A token whose signature's first character is changed.
    static func forged(_ token: String) -> String {
        var parts = token.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        let first = parts[2].first == "A" ? "B" : "A"
        parts[2] = first + parts[2].dropFirst()
        return parts.joined(separator: ".")
    }

    /// An unsigned token (`alg: none`) that claims admin on `id`.
    static func unsigned(_ id: String) -> String {
        func base64URL(_ text: String) -> String {
            Data(text.utf8).base64EncodedString().replacingOccurrences(of: "+", with: "-")
                .replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
        }
        let exp = Int(Date().timeIntervalSince1970) + 300
        return base64URL(#"{"alg":"none","typ":"JWT"}"#) + "."
            + base64URL(#"{"sid":"\#(id)","scope":"admin","exp":\#(exp)}"#) + "."
    }

    /// A token for `id` signed under the kid `kid` with a key the server does not know (the right algorithm).
    static func signedByAStranger(kid: String, sid: String) async throws -> String {
        let stranger = JWTKeyCollection()
        if kid == "es" {
            await stranger.add(ecdsa: ES256PrivateKey(), kid: JWKIdentifier(string: kid))
        } else {
            await stranger.add(
                hmac: HMACKey(from: "another-secret-that-this-server-was-never-given"),
                digestAlgorithm: .sha256,
                kid: JWKIdentifier(string: kid)
            )
        }
        let claims = BackendClaims(
            exp: ExpirationClaim(value: Date().addingTimeInterval(300)),
            sid: sid,
            scope: "admin"
        )
        return try await stranger.sign(claims, kid: JWKIdentifier(string: kid))
    }

    /// Every route against every kind of refused token, backend JWTs signed with HS256 ("hs") and with ES256 ("es")
    /// beside the server's minted ones.
    @Test(arguments: ["hs", "es"])
    func everySessionRouteRefusesTokensThatDoNotAllowItAndChangesNothing(kid: String) async throws {
        let server = try await AuthTestServer.start()
        let a = try await create(server)
        let b = try await create(server)
        #expect(Set(a.tokens.keys) == ["read", "post", "admin"])
        let expired = try await server.sign(kid: kid, sid: a.id, scope: "admin", lifetime: -30)
        let backendAdmin = try await server.sign(kid: kid, sid: a.id, scope: "admin")
        let bad: [(name: String, token: String?, status: Int)] = [
            ("none", nil, 401),
            ("not a JWT", "not-a-token", 401),
            ("expired", expired, 401),
            ("minted, signature altered", Self.forged(a.tokens["admin"]!), 401),
            ("backend's, signature altered", Self.forged(backendAdmin), 401),
            ("signed with a key the server does not know", try await Self.signedByAStranger(kid: kid, sid: a.id), 401),
            ("alg none", Self.unsigned(a.id), 401),
            ("another session's, minted", b.tokens["admin"], 403),
            ("another session's, backend's", try await server.sign(kid: kid, sid: b.id, scope: "admin"), 403),
        ]
        var weakerTokens: [String: [String]] = [:]
        for scope in ["read", "post", "admin"] {
            weakerTokens[scope] = [a.tokens[scope]!, try await server.sign(kid: kid, sid: a.id, scope: scope)]
        }
        let routes: [(method: String, path: String, body: String?, needs: String)] = [
            ("GET", "/v1/sessions/\(a.id)", nil, "read"),
            ("POST", "/v1/sessions/\(a.id)/events", #"{"type":"increment"}"#, "post"),
            ("DELETE", "/v1/sessions/\(a.id)", nil, "admin"),
            ("POST", "/v1/sessions/\(a.id)/tokens", nil, "admin"),
            ("DELETE", "/v1/sessions/\(a.id)/tokens", nil, "admin"),
            ("POST", "/v1/sessions", #"{"system":"counter"}"#, "create"),
            ("PUT", "/v1/sessions/\(Self.unusedID)", #"{"system":"counter"}"#, "create"),
        ]
        for route in routes {
            for token in bad {
                let response = try await server.send(route.method, route.path, token: token.token, body: route.body)
                #expect(response.status == token.status, "\(route.method) \(route.path) with \(token.name)")
                #expect(response.headers["content-type"] == "application/problem+json")
                #expect(response.headers["www-authenticate"]?.hasPrefix("Bearer realm=") == true)
            }
            for weaker in ["read", "post", "admin"].prefix(while: { $0 != route.needs }) {
                for token in weakerTokens[weaker]! {
                    let response = try await server.send(route.method, route.path, token: token, body: route.body)
                    #expect(response.status == 403, "\(route.method) \(route.path) with a \(weaker) token")
                    #expect(response.headers["www-authenticate"]?.contains(#"scope="\#(route.needs)""#) == true)
                }
            }
        }
        // The stream in each of its three places for a token.
        for token in bad {
            let places: [(path: String, headers: [String])] =
                token.token.map { token in
                    [
                        ("/v1/sessions/\(a.id)/stream", ["Authorization: Bearer \(token)"]),
                        ("/v1/sessions/\(a.id)/stream", ["Cookie: feedbackhost_token=\(token)"]),
                        ("/v1/sessions/\(a.id)/stream?access_token=\(token)", []),
                    ]
                } ?? [("/v1/sessions/\(a.id)/stream", [])]
            for place in places {
                let reader = try server.reader(place.path, headers: place.headers)
                #expect(try await reader.head().status == token.status, "stream with \(token.name)")
                await reader.disconnect()
            }
        }
        // Nothing changed: the session is there at revision 0, its tokens still work.
        #expect(try await rev(server, a) == 0)
        let unused = try await server.sign(sid: Self.unusedID, scope: "admin")
        #expect(try await server.send("GET", "/v1/sessions/\(Self.unusedID)", token: unused).status == 404)
        #expect(server.application.service.sessionCount == 2)
        let posted = try await server.send(
            "POST",
            "/v1/sessions/\(a.id)/events",
            token: a.tokens["post"],
            body: #"{"type":"increment"}"#
        )
        #expect(posted.status == 200)
        let used = bad.compactMap(\.token) + a.tokens.values + b.tokens.values + weakerTokens.values.joined()
        await server.stop()
        let log = server.loggedText
        #expect(!log.isEmpty)
        for token in used { #expect(!log.contains(token), "the log holds a token") }
    }
}
