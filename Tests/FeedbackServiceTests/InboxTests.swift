import CurlClient
import Dispatch
import FeedbackLoop
import Logging
import Testing

@testable import FeedbackService

/// A system whose reducer waits at a gate, so a test can hold events in a session's inbox.
private struct GatedSystem: FeedbackSystem {
    struct State: Codable, Equatable, Sendable { var count = 0 }
    struct Event: Codable, Sendable { var type: String }

    static let gate = DispatchSemaphore(value: 0)
    static let (entered, enteredContinuation) = AsyncStream<Void>.makeStream()

    var name: String { "gated" }
    var summary: String { "waits at a gate in its reducer" }
    var clientEventTypes: [String] { ["tick"] }
    var exampleEvents: [Event] { [Event(type: "tick")] }
    var initialState: State { State() }

    static func reduce(_ state: inout State, _ event: Event) {
        enteredContinuation.yield()
        gate.wait()
        state.count += 1
    }

    func feedbacks(_ environment: SystemEnvironment) -> [Feedback<State, Event>] { [] }
}

private struct NoUpstream: UpstreamFetching {
    struct Called: Error {}
    func fetch(_ request: UpstreamRequest) async throws -> UpstreamResponse { throw Called() }
}

@Suite(.timeLimit(.minutes(1)))
struct InboxTests {
    @Test func fullInboxAnswers429AndAcceptsAgainOnceDrained() async throws {
        let session = try HostedSystem(GatedSystem()).startSession(
            id: SessionID.random(),
            epoch: 1,
            state: nil,
            inboxCapacity: 1,
            environment: SystemEnvironment(clock: TestClock(), upstream: NoUpstream(), logger: Logger(label: "test"))
        )
        let tick: JSONValue = .object(["type": .string("tick")])
        let first = Task.detached { try await session.post([tick]) }
        var entered = GatedSystem.entered.makeAsyncIterator()
        _ = await entered.next()  // the first event is inside the reducer, still counted in the inbox

        do {
            _ = try await session.post([tick])
            Issue.record("a post past the inbox's capacity was accepted")
        } catch {
            #expect(error.code == .inboxFull)
            #expect(error.status == 429 && error.retryAfter != nil)
        }
        GatedSystem.gate.signal()
        #expect(try await first.value.rev == 1)

        let second = Task.detached { try await session.post([tick]) }
        _ = await entered.next()
        GatedSystem.gate.signal()
        #expect(try await second.value.rev == 2)
        session.stop()
    }
}
