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

    /// Each change rewrites the queue file by a rename from a sibling, leaving nothing behind: not beside the file,
    /// and not a directory in the temporary folder per write (what `Data.write(options: .atomic)` leaves on Linux:
    /// 2,494 of them had piled up in /tmp from the test runs).
    @Test func rewritingTheQueueLeavesNoFilesBehind() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("fh-queue-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: false)
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("queue.json")
        let temporary = FileManager.default.temporaryDirectory
        func leftovers() throws -> Int {
            try FileManager.default.contentsOfDirectory(atPath: temporary.path)
                .filter { $0.hasPrefix("TemporaryDirectory.") }.count
        }
        let before = try leftovers()
        let writes = 40
        try await withLocalInstance { instance in
            let store = try await instance.checkedHost.createStore(CounterSystem(), queueFile: file)
            defer { store.close() }
            for _ in 0..<writes { store.send(.increment) }
            try await store.settle(atLeast: UInt64(writes))
            #expect(store.confirmed.state.count == writes)
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path) == ["queue.json"])
        // Other processes may make such directories meanwhile, but not one per write of this store.
        #expect(try leftovers() - before < writes / 2)
        let saved = try JSONSerialization.jsonObject(with: Data(contentsOf: file)) as? [String: Any]
        #expect((saved?["pending"] as? [Any])?.isEmpty == true)
    }
}
