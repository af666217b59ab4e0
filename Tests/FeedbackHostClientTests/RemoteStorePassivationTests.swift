import FeedbackHostClient
import FeedbackHostTesting
import Foundation
import Systems
import Testing

/// A passivation in the middle: a store's session leaves memory while some of its events are unconfirmed (the
/// app quit: no stream keeps the session in memory), and the store that comes back sends them once.
@Suite(.serialized, .timeLimit(.minutes(1)))
@MainActor
struct RemoteStorePassivationTests {
    @Test func aPassivationInTheMiddleLosesNothingAndAppliesNothingTwice() async throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("fh-queue-\(UUID().uuidString).json")
        defer { try? FileManager.default.removeItem(at: file) }
        try await withLocalInstance(arguments: ["--session-idle-ms", "200", "--stream-linger-ms", "0"]) { instance in
            let store = try await instance.checkedHost.createStore(CounterSystem(), queueFile: file)
            for _ in 0..<5 { store.send(.increment) }
            store.close()  // quits at once: some posts answered, some not even sent
            try await NumberedPostTests.waitForPassivation(instance)

            let again = try await instance.checkedHost.store(CounterSystem(), session: store.session, queueFile: file)
            defer { again.close() }
            for _ in 0..<5 { again.send(.increment) }
            try await again.settle()
            let data = try await instance.checkedRequest("GET", "/v1/sessions/\(store.session)")
            let json = try JSONSerialization.jsonObject(with: data) as? [String: Any]
            #expect((json?["state"] as? [String: Any])?["count"] as? Int == 10)
            #expect(json?["rev"] as? Int == 10)
            try await again.settle(atLeast: 10)
            #expect(again.state == again.confirmed.state)
            #expect(again.state.count == 10)
        }
    }
}
