import Dispatch
import FeedbackJSON
import FeedbackLoop
import PostgresFixture
import SessionJournalPostgres
import Synchronization
import Testing

@testable import FeedbackService
@testable import SessionJournal
@testable import Systems

/// What a stream may start from (`journaledSnapshot`, which `StreamHub.follow` takes): with a shared journal, only a
/// state the journal holds. Here a step's append waits in the journal's queue (as behind a long commit or in a
/// stalled process) while another replica takes the session over; its state is never offered, neither while it waits
/// nor after the journal refused it.
@Suite(.timeLimit(.minutes(1)))
struct JournaledSnapshotTests {
    private static let increment = Array(#"{"type":"increment"}"#.utf8)

    @Test func aStateWhoseAppendIsOnItsWayIsNotOfferedAndNeverOnceRefused() async throws {
        let url = try PostgresServer.makeDatabase()
        let holder = try PostgresJournal.open(url: url, leaseMilliseconds: 3000, logger: JournaledSessions.quiet)
        defer { holder.close() }
        let other = try PostgresJournal.open(url: url, leaseMilliseconds: 3000, logger: JournaledSessions.quiet)
        defer { other.close() }
        let persistence = SessionPersistence(journal: holder, snapshotInterval: 100, logger: JournaledSessions.quiet)
        let id = JournaledSessions.id(1)
        let session = try HostedSystem(CounterSystem()).startSession(
            id: SessionID(id)!,
            epoch: 1,
            state: nil,
            inboxCapacity: 100,
            environment: JournaledSessions.environment,
            persistence: persistence
        )
        defer { session.stop() }
        _ = try await session.post([try JSONValue(parsing: Self.increment)])
        #expect(await Self.journaled(session) == nil)
        #expect(session.journaledSnapshot()?.rev == 1, "a journaled state is offered")

        let release = DispatchSemaphore(value: 0)
        let held = DispatchSemaphore(value: 0)
        holder.queue.async {
            held.signal()
            release.wait()
        }
        held.wait()
        let reduced = try await session.post([try JSONValue(parsing: Self.increment)])
        #expect(reduced.rev == 2 && session.snapshot().rev == 2)
        #expect(session.journaledSnapshot() == nil, "the state of an append still on its way was offered")
        let observed = Mutex<[UInt64]>([])
        let observation = session.observeSnapshots { snapshot in observed.withLock { $0.append(snapshot.rev) } }
        defer { observation.cancel() }

        #expect(try other.recover(only: [id]).count == 1)  // another replica takes the session over
        release.signal()
        #expect(await Self.journaled(session) != nil, "the journal took the stale copy's append")
        #expect(session.journaledSnapshot() == nil, "a refused state was offered")
        #expect(observed.withLock { $0 }.isEmpty, "the observation showed \(observed.withLock { $0 })")
    }

    /// What `whenJournaled` answers once every append made so far is settled.
    private static func journaled(_ session: any HostedSession) async -> APIError? {
        await withCheckedContinuation { continuation in
            session.whenJournaled { continuation.resume(returning: $0) }
        }
    }
}
