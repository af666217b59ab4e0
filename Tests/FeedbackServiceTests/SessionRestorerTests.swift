import CurlClient
import FeedbackLoop
import Foundation
import Logging
import SystemKit
import Testing
import Upstream

@testable import FeedbackService
@testable import SessionJournal
@testable import Systems

private struct NoUpstream: UpstreamFetching {
    struct Called: Error {}
    func fetch(_ request: UpstreamRequest) async throws -> UpstreamResponse { throw Called() }
}

@Suite(.timeLimit(.minutes(1)))
struct SessionRestorerTests {
    private static let environment = SystemEnvironment(
        clock: TestClock(),
        upstream: NoUpstream(),
        logger: Logger(label: "test")
    )

    /// A valid session id numbered `number`: 22 base64url characters.
    private static func id(_ number: Int) -> String {
        let digits = String(number)
        return String(repeating: "A", count: 21 - digits.count) + digits + "A"
    }

    /// A counter session recovered at a snapshot of revision 3 (count 3) with `events` after it.
    private static func recovered(
        _ number: Int,
        system: String = "counter",
        state: String = #"{"count":3}"#,
        events: [String] = [#"{"type":"increment"}"#, #"{"type":"add","amount":10}"#]
    ) -> RecoveredSession {
        RecoveredSession(
            creation: SessionCreation(id: id(number), system: system, epoch: 7, state: #"{"count":0}"#, createdAt: 0),
            baseRevision: 3,
            baseState: state,
            events: events.enumerated().map { JournalEvent(revision: UInt64(4 + $0), event: $1, origin: .client) }
        )
    }

    /// Runs `body` with a persistence over a fresh journal, closed and removed afterwards.
    private func withPersistence<T>(_ body: (SessionPersistence) throws -> T) throws -> T {
        let directory = TemporaryDataDirectory()
        defer { directory.remove() }
        let journal = try Journal.open(directory: directory.path, logger: Logger(label: "test"))
        defer { journal.close() }
        // The broken sessions' error lines are checked through `brokenProblem`, not in the test output.
        let quiet = Logger(label: "test") { _ in SwiftLogNoOpLogHandler() }
        return try body(SessionPersistence(journal: journal, snapshotInterval: 100, logger: quiet))
    }

    private func restore(
        _ recovered: RecoveredSession,
        _ persistence: SessionPersistence
    ) throws(APIError) -> any HostedSession {
        try HostedSystem(CounterSystem()).restoreSession(
            recovered,
            id: SessionID(recovered.creation.id)!,
            inboxCapacity: 10,
            environment: SessionEnvironment(system: Self.environment),
            persistence: persistence
        )
    }

    private func brokenReason(_ recovered: RecoveredSession) throws -> String? {
        try withPersistence { persistence in
            do throws(APIError) {
                let session = try restore(recovered, persistence)
                session.stop()
                return nil
            } catch {
                #expect(error.code == .sessionBroken)
                return error.message
            }
        }
    }

    @Test func foldsTheEventsAfterTheBaseStateAndStartsAtTheirRevision() throws {
        try withPersistence { persistence in
            let session = try restore(Self.recovered(1), persistence)
            defer { session.stop() }
            let snapshot = session.snapshot()
            #expect(snapshot.rev == 5)
            #expect(String(decoding: snapshot.state, as: UTF8.self) == #"{"count":14}"#)
        }
    }

    @Test func stateThatNoLongerDecodesMarksTheSessionBrokenWithItsRevision() throws {
        let reason = try brokenReason(Self.recovered(1, state: #"{"count":"three"}"#))
        #expect(reason?.contains("state at revision 3") == true)
        #expect(reason?.contains(#"field "count""#) == true)
    }

    @Test func eventThatIsNoLongerJSONMarksTheSessionBrokenWithWhere() throws {
        let reason = try brokenReason(Self.recovered(1, events: [#"{"type":"increment""#]))
        #expect(reason?.contains("event 4") == true)
        #expect(reason?.contains("line 1, column") == true)
    }

    @Test func eventOfATypeTheSystemNoLongerHasMarksTheSessionBroken() throws {
        let reason = try brokenReason(Self.recovered(1, events: [#"{"type":"increment"}"#, #"{"type":"explode"}"#]))
        #expect(reason?.contains("event 5") == true)
        #expect(reason?.contains("explode") == true)
    }

    @Test func serviceRestoresEveryChunkAndMarksOnlyTheBrokenSessions() throws {
        try withPersistence { persistence in
            let service = SessionService(
                configuration: ServiceConfiguration(),
                systems: [HostedSystem(CounterSystem())],
                persistence: persistence
            ) { _ in Self.environment }
            let count = SessionService.restoreChunk * 4 + 17
            let sessions = (0..<count).map { number in
                switch number % 97 {
                case 5: Self.recovered(number, events: [#"{"type":"explode"}"#])
                case 6: Self.recovered(number, system: "gone")
                default: Self.recovered(number)
                }
            }
            let broken = sessions.indices.filter { [5, 6].contains($0 % 97) }.count
            let restored = service.restore(JournalRecovery(sessions: sessions, movedAside: nil, problems: []))
            defer { service.stopAll() }
            #expect(restored == count - broken)
            #expect(service.sessionCount == count - broken)
            #expect(persistence.brokenCount == broken)
            #expect(persistence.brokenProblem(SessionID(Self.id(5))!)?.message.contains("explode") == true)
            #expect(persistence.brokenProblem(SessionID(Self.id(6))!)?.message.contains("gone") == true)
            #expect(service.store[SessionID(Self.id(count - 1))!]?.snapshot().rev == 5)
        }
    }

    @Test func sessionsPastTheCapacityAreMarkedBrokenAndStopped() throws {
        try withPersistence { persistence in
            let capacity = SessionService.restoreChunk + 10
            let service = SessionService(
                configuration: ServiceConfiguration(maxSessions: capacity),
                systems: [HostedSystem(CounterSystem())],
                persistence: persistence
            ) { _ in Self.environment }
            let count = SessionService.restoreChunk * 3
            let sessions = (0..<count).map { Self.recovered($0) }
            let restored = service.restore(JournalRecovery(sessions: sessions, movedAside: nil, problems: []))
            defer { service.stopAll() }
            #expect(restored == capacity)
            #expect(service.sessionCount == capacity)
            #expect(persistence.brokenCount == count - capacity)
            let refused = sessions.map { SessionID($0.creation.id)! }.filter { service.store[$0] == nil }
            #expect(refused.count == count - capacity)
            #expect(refused.allSatisfy { persistence.brokenProblem($0)?.message.contains("maximum") == true })
        }
    }

    @Test func restoringSessionsTheStoreAlreadyHoldsKeepsTheHeldOnes() throws {
        try withPersistence { persistence in
            let service = SessionService(
                configuration: ServiceConfiguration(),
                systems: [HostedSystem(CounterSystem())],
                persistence: persistence
            ) { _ in Self.environment }
            let sessions = (0..<10).map { Self.recovered($0) }
            #expect(service.restore(JournalRecovery(sessions: sessions, movedAside: nil, problems: [])) == 10)
            defer { service.stopAll() }
            let held = service.store[SessionID(Self.id(3))!]
            let again = (0..<10).map { Self.recovered($0, events: []) }
            #expect(service.restore(JournalRecovery(sessions: again, movedAside: nil, problems: [])) == 0)
            #expect(service.sessionCount == 10)
            #expect(persistence.brokenCount == 0)
            #expect(service.store[SessionID(Self.id(3))!] === held)
            #expect(held?.snapshot().rev == 5)
        }
    }
}
