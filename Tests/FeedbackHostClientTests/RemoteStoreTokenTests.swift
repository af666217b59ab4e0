import FeedbackHostClient
import FeedbackHostTesting
import Foundation
import Systems
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A store's token stops working (the session's tokens are revoked): it says `needsToken`, keeps its events, and
/// resumes with a new token.
@Suite(.serialized, .timeLimit(.minutes(1)))
@MainActor
struct RemoteStoreTokenTests {
    @Test func aRevokedTokenGetsNeedsTokenAndANewOneResumes() async throws {
        let keyFile = FileManager.default.temporaryDirectory.appendingPathComponent("fh-key-\(UUID().uuidString)")
        try Data((0..<32).map { _ in UInt8.random(in: 0...255) }).write(to: keyFile)
        defer { try? FileManager.default.removeItem(at: keyFile) }
        let arguments = ["--auth", "jwt", "--auth-key-file", keyFile.path, "--auth-create", "open"]
        try await withLocalInstance(arguments: arguments) { instance in
            let created = try await instance.request("POST", "/v1/sessions", body: Data(#"{"system":"counter"}"#.utf8))
            let json = try JSONSerialization.jsonObject(with: created) as? [String: Any]
            let id = try #require(json?["id"] as? String)
            let tokens = try #require(json?["tokens"] as? [String: String])
            let host = FeedbackHost(url: instance.url, token: tokens["post"])
            let store = try await host.store(CounterSystem(), session: id)
            defer { store.close() }
            store.send(.increment)
            try await store.settle(atLeast: 1)

            // Revoked: the stream says reauth, a post gets 401.
            var revoke = URLRequest(url: instance.url.appendingPathComponent("/v1/sessions/\(id)/tokens"))
            revoke.httpMethod = "DELETE"
            revoke.setValue("Bearer \(tokens["admin"] ?? "")", forHTTPHeaderField: "Authorization")
            let (answer, _) = try await URLSession.shared.data(for: revoke)
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
}
