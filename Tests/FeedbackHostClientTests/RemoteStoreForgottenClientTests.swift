import FeedbackHostClient
import FeedbackHostTesting
import Foundation
import Systems
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A session that forgot a store's client (`session.clients.max`) answers its next post 409 `client-unknown`: the
/// store goes on as a new client, losing nothing, except a post that had gone out without an answer, which it drops
/// rather than risk applying twice.
@Suite(.serialized, .timeLimit(.minutes(2)))
@MainActor
struct RemoteStoreForgottenClientTests {
    @Test func aForgottenStoreGoesOnAsANewClientAndLosesNothing() async throws {
        try await withLocalInstance(arguments: ["--session-clients-max", "1"]) { instance in
            let store = try await instance.checkedHost.createStore(CounterSystem())
            defer { store.close() }
            store.send(.increment)
            try await store.settle()
            let before = store.clientID
            // Another client posts: the session remembers one client, so it forgets the store's.
            let other = try await NumberedPostTests.post(
                instance,
                store.session,
                #"{"type":"add","amount":10}"#,
                client: "other",
                sequence: 1
            )
            #expect(other.status == 200)
            store.send(.increment)
            store.send(.increment)
            try await RemoteStoreTests.expectConverged([store], instance, expected: 13)
            #expect(store.clientID != before)
            #expect(store.lastRefusal == nil)
            #expect(store.mispredictions == 0)
        }
    }

    /// No server behind the posts: a script answers them. The first post's answer is lost, and its retry is told that
    /// the session does not know the client: the event is dropped with `lastRefusal`, the next one goes out as post
    /// 1 of a new client.
    @Test func aPostWithoutAnAnswerIsNotSentAgainUnderANewClient() async throws {
        let script = ScriptedTransport()
        // Nothing listens on port 1: the stream stays offline, which changes nothing for the posts.
        let host = FeedbackHost(url: URL(string: "http://127.0.0.1:1")!, transport: script)
        let store = try await host.store(CounterSystem(), session: "s")
        defer { store.close() }
        let first = store.clientID
        store.send(.increment)
        store.send(.add(amount: 5))
        let deadline = ContinuousClock.now + .seconds(10)
        while !store.pending.isEmpty && ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(10)) }
        #expect(store.pending.isEmpty)
        #expect(store.lastRefusal?.code == "client-unknown")
        #expect(store.clientID != first)
        #expect(store.confirmed.state.count == 5)
        #expect(store.state.count == 5)
        #expect(
            script.posts == [
                "\(first) 1 increment", "\(first) 1 increment", "\(store.clientID) 1 add",
            ]
        )
    }
}

/// Answers the store's requests from a script: the session at revision 0; the first post's answer is lost; its
/// retry is 409 `client-unknown`; any later post is applied on a counter at 0 (the lost one was not).
final class ScriptedTransport: HostTransport, @unchecked Sendable {
    private let lock = NSLock()
    private var sent: [String] = []

    /// Each post as "client sequence type", in order.
    var posts: [String] { lock.withLock { sent } }

    func send(_ request: URLRequest) async throws -> (body: Data, status: Int) {
        guard request.httpMethod == "POST" else {
            return (Data(#"{"id":"s","rev":0,"state":{"count":0}}"#.utf8), 200)
        }
        let client = request.value(forHTTPHeaderField: "Client-ID") ?? ""
        let sequence = request.value(forHTTPHeaderField: "Client-Sequence") ?? ""
        let event = try JSONSerialization.jsonObject(with: request.httpBody ?? Data()) as? [String: Any]
        let type = event?["type"] as? String ?? ""
        let count = lock.withLock {
            sent.append("\(client) \(sequence) \(type)")
            return sent.count
        }
        switch count {
        case 1:
            throw URLError(.networkConnectionLost)
        case 2:
            let problem = """
                {"type":"urn:feedbackhost:problem:client-unknown","status":409,"detail":"forgotten",\
                "client":"\(client)","sequence":1,"expectedSequence":1}
                """
            return (Data(problem.utf8), 409)
        default:
            let amount = event?["amount"] as? Int ?? 1
            return (Data(#"{"rev":1,"state":{"count":\#(amount)},"clients":{"\#(client)":\#(sequence)}}"#.utf8), 200)
        }
    }
}
