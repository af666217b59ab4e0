import CurlClient
import FeedbackJSON
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
                // A journaled record this build cannot read: 500 with the session, the version and the path.
                #expect(error.code == .sessionSchemaUnreadable)
                #expect(error.status == 500)
                #expect(error.message.contains(recovered.creation.id))
                #expect(error.extra["schemaVersion"] == .int(1))
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
        #expect(reason?.contains("(at /count)") == true)
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
}
