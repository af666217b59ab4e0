import FeedbackHostClient
import FeedbackHostTesting
import Foundation
import Systems
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A store's token stops working (the session's tokens are revoked, or the token expires): it says `needsToken`,
/// keeps its events, and resumes with a new token.
@Suite(.serialized, .timeLimit(.minutes(1)))
@MainActor
struct RemoteStoreTokenTests {
    @Test func aRevokedTokenGetsNeedsTokenAndANewOneResumes() async throws {
        let keyFile = FileManager.default.temporaryDirectory.appendingPathComponent("fh-key-\(UUID().uuidString)")
        try Data((0..<32).map { _ in UInt8.random(in: 0...255) }).write(to: keyFile)
        defer { try? FileManager.default.removeItem(at: keyFile) }
        let arguments = ["--auth", "jwt", "--auth-key-file", keyFile.path, "--auth-create", "open"]
        try await withLocalInstance(arguments: arguments) { instance in
            let created = try await instance.checkedRequest(
                "POST",
                "/v1/sessions",
                body: Data(#"{"system":"counter"}"#.utf8)
            )
            let json = try JSONSerialization.jsonObject(with: created) as? [String: Any]
            let id = try #require(json?["id"] as? String)
            let tokens = try #require(json?["tokens"] as? [String: String])
            let host = FeedbackHost(url: instance.url, token: tokens["post"], transport: CheckedTransport())
            let store = try await host.store(CounterSystem(), session: id)
            defer { store.close() }
            store.send(.increment)
            try await store.settle(atLeast: 1)

            // Revoked: the stream says reauth, a post gets 401.
            var revoke = URLRequest(url: instance.url.appendingPathComponent("/v1/sessions/\(id)/tokens"))
            revoke.httpMethod = "DELETE"
            revoke.setValue("Bearer \(tokens["admin"] ?? "")", forHTTPHeaderField: "Authorization")
            let (answer, _) = try await checkedData(for: revoke)
            let fresh = try #require(
                (try JSONSerialization.jsonObject(with: answer) as? [String: Any])?["tokens"] as? [String: String]
            )
            store.send(.increment)
            let deadline = ContinuousClock.now + .seconds(10)
            while store.connection != .needsToken && ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(10))
            }
            #expect(store.connection == .needsToken)
            #expect(store.pending.count == 1)
            #expect(store.state.count == 2)

            store.setToken(fresh["post"])
            try await store.settle(atLeast: 2)
            #expect(store.confirmed.state.count == 2)
            // The stream opens again with the new token (the post may have been answered first).
            let live = ContinuousClock.now + .seconds(10)
            while store.connection != .live && ContinuousClock.now < live {
                try await Task.sleep(for: .milliseconds(10))
            }
            #expect(store.connection == .live)
        }
    }

    /// A backend's short token (valid 4 to 5 s) expires while the store posts an event every 20 ms: the stream's
    /// `reauth` or a post's 401 sets `needsToken`, the events sent meanwhile wait in `pending` (predicted), and a new
    /// token sends them: the server's count is the number sent, none lost, none twice.
    @Test func anExpiredTokenGetsNeedsTokenAndANewOneResumesWithoutLosingOrDoublingEvents() async throws {
        let keyFile = FileManager.default.temporaryDirectory.appendingPathComponent("fh-hs-\(UUID().uuidString)")
        let backend = BackendToken(secret: BackendToken.randomSecret())
        try Data(backend.secret).write(to: keyFile)
        defer { try? FileManager.default.removeItem(at: keyFile) }
        let arguments = ["--auth", "jwt", "--auth-keys", keyFile.path, "--auth-create", "open"]
        try await withLocalInstance(arguments: arguments) { instance in
            let created = try await instance.checkedRequest(
                "POST",
                "/v1/sessions",
                body: Data(#"{"system":"counter"}"#.utf8)
            )
            let id = try #require((try JSONSerialization.jsonObject(with: created) as? [String: Any])?["id"] as? String)
            let short = backend.token(session: id, scope: "post", expiry: Date().addingTimeInterval(5))
            let store = try await FeedbackHost(url: instance.url, token: short, transport: CheckedTransport()).store(
                CounterSystem(),
                session: id
            )
            defer { store.close() }

            var sent = 0
            let deadline = ContinuousClock.now + .seconds(20)
            while store.connection != .needsToken && ContinuousClock.now < deadline {
                store.send(.increment)
                sent += 1
                try await Task.sleep(for: .milliseconds(20))
            }
            #expect(store.connection == .needsToken)
            for _ in 0..<5 { store.send(.increment) }
            sent += 5
            #expect(store.pending.count >= 5)
            #expect(store.state.count == sent)

            let fresh = backend.token(session: id, scope: "post", expiry: Date().addingTimeInterval(120))
            store.setToken(fresh)
            try await store.settle(atLeast: UInt64(sent), timeout: .seconds(20))
            #expect(store.confirmed.state.count == sent)
            #expect(store.confirmed.rev == UInt64(sent))
            #expect(store.state == store.confirmed.state)
            var get = URLRequest(url: instance.url.appendingPathComponent("/v1/sessions/\(id)"))
            get.setValue("Bearer \(fresh)", forHTTPHeaderField: "Authorization")
            let (body, _) = try await checkedData(for: get)
            let server = try JSONSerialization.jsonObject(with: body) as? [String: Any]
            #expect((server?["state"] as? [String: Any])?["count"] as? Int == sent)
            let live = ContinuousClock.now + .seconds(10)
            while store.connection != .live && ContinuousClock.now < live {
                try await Task.sleep(for: .milliseconds(10))
            }
            #expect(store.connection == .live)
        }
    }
}
