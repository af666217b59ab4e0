import CurlClient
import Dispatch
import FeedbackJSON
import FeedbackLoop
import Foundation
import Logging
import Synchronization
import SystemKit
import Testing
import Upstream

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
            environment: SessionEnvironment(
                system: SystemEnvironment(clock: TestClock(), upstream: NoUpstream(), logger: Logger(label: "test"))
            )
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

@Suite(.timeLimit(.minutes(1)))
struct BusyInboxTests {
    @Test func whileTheLoopIsBusyConcurrentPostsPastTheInboxGet429() throws {
        let session = try HostedSystem(CounterSystem()).startSession(
            id: SessionID.random(),
            epoch: 1,
            state: nil,
            inboxCapacity: 3,
            environment: SessionEnvironment(
                system: SystemEnvironment(clock: TestClock(), upstream: NoUpstream(), logger: Logger(label: "test"))
            )
        )
        let increment: JSONValue = .object(["type": .string("increment")])
        let answers = AnswerLog()
        let entered = DispatchSemaphore(value: 0)
        let gate = DispatchSemaphore(value: 0)
        // The first post drains on a Dispatch thread; its answer, given on that thread while it still owns the
        // loop (outside the loop's lock), waits at the gate. So the loop is busy and later events queue up.
        DispatchQueue.global().async {
            session.post([increment], ifMatch: nil, claim: nil) { result in
                answers.add(result)
                entered.signal()
                gate.wait()
            }
        }
        #expect(entered.wait(timeout: .now() + 10) == .success)
        // 16 posts at once: three fit in the inbox, the others are refused at once.
        DispatchQueue.concurrentPerform(iterations: 16) { _ in
            session.post([increment], ifMatch: nil, claim: nil) { answers.add($0) }
        }
        let refusals = answers.all.compactMap { result -> APIError? in
            if case .failure(let error) = result { return error }
            return nil
        }
        #expect(refusals.count == 13)
        #expect(refusals.allSatisfy { $0.code == .inboxFull && $0.status == 429 && $0.retryAfter != nil })
        gate.signal()
        var applied = 0
        for _ in 0..<1000 where applied < 4 {
            applied = answers.all.filter { if case .success = $0 { true } else { false } }.count
            usleep(5000)
        }
        #expect(applied == 4)
        #expect(session.snapshot().rev == 4)
        session.stop()
    }
}

private final class AnswerLog: Sendable {
    private let results = Mutex<[Result<SessionSnapshot, APIError>]>([])
    func add(_ result: Result<SessionSnapshot, APIError>) { results.withLock { $0.append(result) } }
    var all: [Result<SessionSnapshot, APIError>] { results.withLock { $0 } }
}
