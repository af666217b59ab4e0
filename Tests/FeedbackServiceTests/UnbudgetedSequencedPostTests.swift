import FeedbackJSON
import FeedbackLoop
import Logging
import SystemKit
import Testing
import Upstream

@testable import FeedbackService
@testable import Systems

/// A numbered post to a session that counts against no memory budget is marked like any other: its answer and the
/// session's later answers name the client's last post. (The trial once skipped such a session's acceptance, so the
/// mark was never made.)
@Suite(.timeLimit(.minutes(1)))
struct UnbudgetedSequencedPostTests {
    private struct NoUpstream: UpstreamFetching {
        struct Called: Error {}
        func fetch(_ request: UpstreamRequest) async throws -> UpstreamResponse { throw Called() }
    }

    private func post(
        _ session: any HostedSession,
        _ stamp: ClientStamp
    ) async -> Result<SessionSnapshot, APIError> {
        #expect(session.beginSequenced(stamp, remembering: 10) == .proceed)
        return await withCheckedContinuation { done in
            session.postSequenced([.object(["type": .string("increment")])], ifMatch: nil, stamp: stamp) { result in
                // As the host does with an applied post's answer.
                if case .success(let snapshot) = result {
                    session.withClientLedger { $0.complete(stamp, .applied(snapshot)) }
                }
                done.resume(returning: result)
            }
        }
    }

    @Test func aNumberedPostIsMarkedWithoutABudget() async throws {
        let session = try HostedSystem(CounterSystem()).startSession(
            id: SessionID.random(),
            epoch: 1,
            state: nil,
            inboxCapacity: 8,
            environment: SessionEnvironment(
                system: SystemEnvironment(clock: TestClock(), upstream: NoUpstream(), logger: Logger(label: "test"))
            )
        )
        defer { session.stop() }
        let first = try await post(session, ClientStamp(client: "c1", sequence: 1)).get()
        #expect(first.rev == 1)
        #expect(first.clients.map { String(decoding: $0, as: UTF8.self) } == #"{"c1":1}"#)
        let second = try await post(session, ClientStamp(client: "c1", sequence: 2)).get()
        #expect(second.clients.map { String(decoding: $0, as: UTF8.self) } == #"{"c1":2}"#)
    }
}
