import FeedbackHostClient
import FeedbackHostTesting
import Foundation
import Systems
import Testing

/// The outbox in a file: events queued while the server is down survive the app's quitting and go out once after.
@Suite(.serialized, .timeLimit(.minutes(1)))
@MainActor
struct RemoteStoreQueueTests {
    @Test func eventsQueuedOfflineGoOutOnceAfterAQuit() async throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("fh-queue-\(UUID().uuidString).json")
        defer { try? FileManager.default.removeItem(at: file) }
        try await withLocalInstance { instance in
            let store = try await instance.checkedHost.createStore(CounterSystem(), queueFile: file)
            store.send(.increment)
            try await store.settle(atLeast: 1)
            instance.kill()
            store.send(.add(amount: 10))
            store.send(.increment)
            #expect(store.state.count == 12)
            try await Task.sleep(for: .milliseconds(100))
            store.close()  // the app quits with two events unconfirmed

            try await instance.restart()
            let again = try await instance.checkedHost.store(CounterSystem(), session: store.session, queueFile: file)
            defer { again.close() }
            #expect(again.clientID == store.clientID)
            #expect(again.pending.count == 2)
            #expect(again.state.count == 12)
            try await again.settle(atLeast: 3)
            #expect(again.confirmed.state.count == 12)
            let data = try await instance.checkedRequest("GET", "/v1/sessions/\(store.session)")
            let json = try JSONSerialization.jsonObject(with: data) as? [String: Any]
            #expect((json?["state"] as? [String: Any])?["count"] as? Int == 12)
            #expect(json?["rev"] as? Int == 3)
        }
    }
}
