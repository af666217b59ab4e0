import CurlClient
import FeedbackLoop
import Logging
import Testing

@testable import FeedbackService
@testable import Systems

private struct NoUpstream: UpstreamFetching {
    struct Called: Error {}
    func fetch(_ request: UpstreamRequest) async throws -> UpstreamResponse { throw Called() }
}

@Suite(.timeLimit(.minutes(1)))
struct InboxTests {
    private func session(inboxCapacity: Int) throws -> any HostedSession {
        try HostedSystem(CounterSystem()).startSession(
            id: SessionID.random(),
            epoch: 1,
            state: nil,
            inboxCapacity: inboxCapacity,
            environment: SystemEnvironment(clock: TestClock(), upstream: NoUpstream(), logger: Logger(label: "test"))
        )
    }

    @Test func postsBeyondTheInboxAnswer429AndChangeNothing() async throws {
        let session = try session(inboxCapacity: 2)
        let increment: JSONValue = .object(["type": .string("increment")])
        do {
            _ = try await session.post([increment, increment, increment])
            Issue.record("a post past the inbox's capacity was accepted")
        } catch {
            #expect(error.code == .inboxFull)
            #expect(error.status == 429 && error.retryAfter != nil)
        }
        #expect(session.snapshot().rev == 0)
        // The refused post left nothing in the inbox: a full one fits again.
        #expect(try await session.post([increment, increment]).rev == 2)
        session.stop()
    }
}
