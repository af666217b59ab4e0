import Foundation
import Systems
import Testing

@testable import FeedbackHostClient

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A server without a journal shows a state on its stream as soon as it is reduced (one with a journal once the
/// journal holds it): a crash undoes a post that the store saw applied. The store takes an event out of its outbox
/// only when the post is answered, so it sends that post again, with the same number, and the restarted server
/// applies it once. A scripted transport plays the server, so the test holds whatever the server's streams do.
@Suite(.serialized, .timeLimit(.minutes(1)))
@MainActor
struct RemoteStoreCrashTests {
    /// Post `lost` reaches the server, which reduces it and streams the state; the server dies before journaling it
    /// (its connection drops unanswered) while the store queues one more. Post 1 lost is a client the restarted server
    /// never heard of; post 2 lost, one it knows up to post 1.
    @Test(arguments: [1, 2] as [UInt64])
    func aPostTheStreamShowedButACrashUndidIsSentAgain(lost: UInt64) async throws {
        let script = CrashingServer(losing: lost)
        // Nothing listens on port 1: the stream is the test's, which changes nothing for the posts.
        let host = FeedbackHost(url: URL(string: "http://127.0.0.1:1")!, transport: script)
        let store = try await host.store(CounterSystem(), session: "s")
        defer { store.close() }
        let client = store.clientID
        for _ in 0..<lost { store.send(.increment) }
        await script.lostPostArrived()
        // What the stream says while that post is being journaled: the state that includes it.
        #expect(store.take(.events([Self.shown(count: lost, by: client)])))
        #expect(store.pending.isEmpty)
        #expect(store.state.count == Int(lost))
        store.send(.increment)
        script.crash()
        try await store.settle()
        #expect(script.count == Int(lost) + 1)
        #expect(store.state.count == Int(lost) + 1)
        #expect(store.lastRefusal == nil)
        #expect(store.clientID == client)
        let numbers = (1...lost).map { "\(client) \($0)" } + ["\(client) \(lost)", "\(client) \(lost + 1)"]
        #expect(script.posts == numbers)
    }

    /// A counter's snapshot at revision `count` (count `count`) that includes post `count` of `client`.
    private static func shown(count: UInt64, by client: String) -> ServerSentEvent {
        ServerSentEvent(
            type: "snapshot",
            id: "e-\(count)",
            data: #"{"rev":\#(count),"state":{"count":\#(count)},"clients":{"\#(client)":\#(count)}}"#
        )
    }

    /// The app quits while the stream has shown its post and the answer has not come: the queue file keeps the event,
    /// and the store opened next sends it again with its client and number.
    @Test func aPostTheStreamShowedStaysInTheQueueFile() async throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("queue-\(UUID().uuidString).json")
        defer { try? FileManager.default.removeItem(at: file) }
        let script = CrashingServer(losing: 1)
        let host = FeedbackHost(url: URL(string: "http://127.0.0.1:1")!, transport: script)
        let store = try await host.store(CounterSystem(), session: "s", queueFile: file)
        let client = store.clientID
        store.send(.increment)
        await script.lostPostArrived()
        #expect(store.take(.events([Self.shown(count: 1, by: client)])))
        store.close()
        script.crash()
        let reopened = try await host.store(CounterSystem(), session: "s", queueFile: file)
        defer { reopened.close() }
        try await reopened.settle()
        #expect(reopened.clientID == client)
        #expect(reopened.state.count == 1)
        #expect(script.count == 1)
        #expect(script.posts == ["\(client) 1", "\(client) 1"])
    }
}

/// A counter server behind the store's posts that applies each numbered post once, as `ClientLedger` does, and
/// journals it before answering, except post `losing`: that one arrives, waits for `crash()`, and is never answered
/// nor kept (the server died before its journal commit; the restart forgot it).
final class CrashingServer: HostTransport, @unchecked Sendable {
    private let lock = NSLock()
    private let losing: UInt64
    private var crashed = false
    private var sent: [String] = []
    private var counter = 0
    private var rev = 0
    private var last: [String: UInt64] = [:]
    private let arrivals = AsyncStream<Void>.makeStream()
    private let crashes = AsyncStream<Void>.makeStream()

    init(losing: UInt64) {
        self.losing = losing
    }

    /// Each post as "client sequence", in order.
    var posts: [String] { lock.withLock { sent } }
    /// The journaled count.
    var count: Int { lock.withLock { counter } }

    /// Returns once post `losing` reached the server.
    func lostPostArrived() async {
        for await _ in arrivals.stream { return }
    }

    /// The server dies: post `losing` goes unanswered.
    func crash() {
        crashes.continuation.yield()
    }

    func send(_ request: URLRequest) async throws -> (body: Data, status: Int) {
        guard request.httpMethod == "POST" else {
            return (Data(#"{"id":"s","rev":0,"state":{"count":0}}"#.utf8), 200)
        }
        let client = request.value(forHTTPHeaderField: "Client-ID") ?? ""
        let sequence = UInt64(request.value(forHTTPHeaderField: "Client-Sequence") ?? "") ?? 0
        let loses = lock.withLock {
            sent.append("\(client) \(sequence)")
            guard !crashed, sequence == losing else { return false }
            crashed = true
            return true
        }
        if loses {
            arrivals.continuation.yield()
            for await _ in crashes.stream { break }
            throw URLError(.networkConnectionLost)
        }
        return lock.withLock { apply(client, sequence) }
    }

    private func apply(_ client: String, _ sequence: UInt64) -> (body: Data, status: Int) {
        let known = last[client]
        if known == nil, sequence != 1 { return Self.conflict("client-unknown", expected: 1) }
        let previous = known ?? 0
        if sequence > previous + 1 { return Self.conflict("sequence-gap", expected: previous + 1) }
        if sequence == previous + 1 {
            counter += 1
            rev += 1
            last[client] = sequence
        }
        // The number again gets an answer again (the latest state, in this script).
        let answer = #"{"rev":\#(rev),"state":{"count":\#(counter)},"clients":{"\#(client)":\#(sequence)}}"#
        return (Data(answer.utf8), 200)
    }

    private static func conflict(_ code: String, expected: UInt64) -> (body: Data, status: Int) {
        let problem = #"{"type":"urn:feedbackhost:problem:\#(code)","status":409,"detail":"\#(code)","#
        return (Data((problem + #""expectedSequence":\#(expected)}"#).utf8), 409)
    }
}
