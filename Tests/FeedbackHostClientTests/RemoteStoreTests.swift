import FeedbackHostClient
import FeedbackHostTesting
import Foundation
import Systems
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// `RemoteStore` against the real binary (a `LocalInstance`).
@Suite(.serialized, .timeLimit(.minutes(3)))
@MainActor
struct RemoteStoreTests {
    static func serverCount(_ instance: LocalInstance, _ session: String) async throws -> (count: Int, rev: Int) {
        let data = try await instance.checkedRequest("GET", "/v1/sessions/\(session)")
        let json = try JSONSerialization.jsonObject(with: data) as? [String: Any]
        return ((json?["state"] as? [String: Any])?["count"] as? Int ?? -1, json?["rev"] as? Int ?? -1)
    }

    /// Waits until the stores sent everything and follow the server's revision, then checks state == confirmed == GET.
    static func expectConverged(
        _ stores: [RemoteStore<CounterSystem>],
        _ instance: LocalInstance,
        expected: Int,
        sourceLocation: SourceLocation = #_sourceLocation
    ) async throws {
        // Every event sent reached the server, then every store follows it to its revision.
        for store in stores { try await store.settle() }
        let server = try await serverCount(instance, stores[0].session)
        for store in stores {
            try await store.settle(atLeast: UInt64(server.rev))
            #expect(store.state == store.confirmed.state, sourceLocation: sourceLocation)
            #expect(store.confirmed.state.count == server.count, sourceLocation: sourceLocation)
            #expect(store.confirmed.rev == UInt64(server.rev), sourceLocation: sourceLocation)
        }
        #expect(server.count == expected, sourceLocation: sourceLocation)
    }

    @Test func stateChangesBeforeThePostsAnswer() async throws {
        try await withLocalInstance { instance in
            let store = try await instance.checkedHost.createStore(CounterSystem())
            defer { store.close() }
            store.send(.increment)
            // No suspension since the send: the post cannot have been answered.
            #expect(store.state.count == 1)
            #expect(store.confirmed.rev == 0)
            #expect(store.pending.count == 1)
            try await Self.expectConverged([store], instance, expected: 1)
            #expect(store.pending.isEmpty)
            #expect(store.mispredictions == 0)
        }
    }

    @Test func twoStoresOnOneSessionConvergeWithNoEventCountedTwice() async throws {
        try await withLocalInstance { instance in
            let first = try await instance.checkedHost.createStore(CounterSystem())
            let second = try await instance.checkedHost.store(CounterSystem(), session: first.session)
            defer {
                first.close()
                second.close()
            }
            var generator = SystemRandomNumberGenerator()
            var expected = 0
            let rounds = Int(ProcessInfo.processInfo.environment["CLIENT_INTERLEAVINGS"] ?? "") ?? 1000
            let start = ContinuousClock.now
            for _ in 0..<rounds {
                for _ in 0..<Int.random(in: 1...4, using: &generator) {
                    let store = Bool.random(using: &generator) ? first : second
                    switch Int.random(in: 0..<3, using: &generator) {
                    case 0:
                        store.send(.increment)
                        expected += 1
                    case 1:
                        store.send(.decrement)
                        expected -= 1
                    default:
                        let amount = Int.random(in: -5...5, using: &generator)
                        store.send(.add(amount: amount))
                        expected += amount
                    }
                    if Bool.random(using: &generator) { await Task.yield() }
                }
                try await Self.expectConverged([first, second], instance, expected: expected)
            }
            print("\(rounds) interleavings in \(ContinuousClock.now - start)")
            #expect(first.mispredictions == 0)
            #expect(second.mispredictions == 0)
        }
    }

    /// Sends every request, but loses the answer of the first numbered post: the client sees a dropped connection.
    final class LosingTransport: HostTransport, @unchecked Sendable {
        private let lock = NSLock()
        private var lost = 0

        var answersLost: Int { lock.withLock { lost } }

        func send(_ request: URLRequest) async throws -> (body: Data, status: Int) {
            let answer = try await CheckedTransport().send(request)
            let lose = lock.withLock {
                guard lost == 0, request.value(forHTTPHeaderField: "Client-Sequence") != nil else { return false }
                lost += 1
                return true
            }
            if lose { throw URLError(.networkConnectionLost) }
            return answer
        }
    }

    @Test func aRetriedPostWhoseAnswerWasLostAppliesOnce() async throws {
        try await withLocalInstance { instance in
            let transport = LosingTransport()
            let host = FeedbackHost(url: instance.url, transport: transport)
            let store = try await host.createStore(CounterSystem())
            defer { store.close() }
            store.send(.add(amount: 5))
            store.send(.increment)
            try await Self.expectConverged([store], instance, expected: 6)
            #expect(transport.answersLost == 1)
            #expect(store.state.count == 6)
            #expect(store.mispredictions == 0)
        }
    }

    @Test func aRestartInTheMiddleLosesNothingAndAppliesNothingTwice() async throws {
        try await withLocalInstance { instance in
            let store = try await instance.checkedHost.createStore(CounterSystem())
            defer { store.close() }
            for _ in 0..<20 { store.send(.increment) }
            try await Task.sleep(for: .milliseconds(5))
            // A crash with posts in flight: some applied and journaled whose answers never came.
            instance.kill()
            for _ in 0..<20 { store.send(.increment) }
            try await instance.restart()
            try await Self.expectConverged([store], instance, expected: 40)
            // And a graceful restart.
            for _ in 0..<10 { store.send(.decrement) }
            try await instance.restart()
            try await Self.expectConverged([store], instance, expected: 30)
        }
    }

    @Test func aRefusedEventLeavesTheOthers() async throws {
        try await withLocalInstance { instance in
            let store = try await instance.checkedHost.createStore(CounterWithMultiply())
            defer { store.close() }
            store.send(.counter(.add(amount: 3)))
            store.send(.multiply(10))
            store.send(.counter(.increment))
            #expect(store.state.count == 31)
            try await store.settle()
            #expect(store.lastRefusal?.status == 422)
            #expect(store.state.count == 4)
            #expect(store.confirmed.state.count == 4)
            #expect(try await Self.serverCount(instance, store.session).count == 4)
        }
    }

    @Test func aReducerThatDiffersIsDetectedAndPredictionStops() async throws {
        try await withLocalInstance { instance in
            let store = try await instance.checkedHost.createStore(SkewedCounter())
            defer { store.close() }
            store.send(.increment)
            #expect(store.state.count == 2)  // predicted by the skewed reducer
            try await store.settle()
            #expect(store.mispredictions == 1)
            #expect(!store.predicting)
            #expect(store.state.count == 1)
            store.send(.increment)
            #expect(store.state.count == 1)  // no longer predicted
            try await store.settle()
            #expect(store.state.count == 2)

            let versionTwo = try await instance.checkedHost.store(CounterVersionTwo(), session: store.session)
            defer { versionTwo.close() }
            #expect(!versionTwo.predicting)
            #expect(versionTwo.mispredictions == 1)
        }
    }
}
