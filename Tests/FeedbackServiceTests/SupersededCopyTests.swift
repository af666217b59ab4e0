import FeedbackJSON
import Foundation
import Systems
import Testing

@testable import FeedbackService

/// A copy of a session that another replica took over is stopped (`supersede`): a post that reaches it (its handler
/// found the copy before the takeover dropped it) is answered 503 with a retry, served where the session lives now,
/// never 404 as if the session did not exist. (A shared journal's takeover raced a post this way in make test's
/// cluster fault test: one 404 among 58,000 posts.) A deleted session's post is still 404.
@Suite(.timeLimit(.minutes(1)))
struct SupersededCopyTests {
    private static func startCounter(_ number: Int) throws -> any HostedSession {
        try HostedSystem(CounterSystem()).startSession(
            id: SessionID(JournaledSessions.id(number))!,
            epoch: 1,
            state: nil,
            inboxCapacity: 100,
            environment: JournaledSessions.environment
        )
    }

    private static let increment: [JSONValue] = [.object(["type": .string("increment")])]

    @Test func aPostThatReachesASupersededCopyIsAnswered503WithARetry() async throws {
        let session = try Self.startCounter(1)
        _ = try await session.post(Self.increment)
        session.supersede()
        await #expect {
            try await session.post(Self.increment)
        } throws: { error in
            guard let problem = error as? APIError else { return false }
            return problem.status == 503 && problem.code == .journalUnavailable && problem.retryAfter == 1
                && problem.message == SessionPersistence.movedProblem(SessionID(JournaledSessions.id(1))!).message
        }
    }

    @Test func aPostThatReachesADeletedSessionIsStill404() async throws {
        let session = try Self.startCounter(2)
        session.stop()
        await #expect {
            try await session.post(Self.increment)
        } throws: { error in
            (error as? APIError)?.code == .sessionNotFound
        }
    }
}
