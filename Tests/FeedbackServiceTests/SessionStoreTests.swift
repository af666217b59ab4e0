import FeedbackLoop
import Logging
import SessionRuntime
import SystemKit
import Testing

@testable import FeedbackService
@testable import Systems

/// The store's reservations: a session is made once per id, even when the journal is read while it is being made.
@Suite(.timeLimit(.minutes(1)))
struct SessionStoreTests {
    private func counter(_ id: SessionID) throws(APIError) -> any HostedSession {
        try HostedSystem(CounterSystem()).startSession(
            id: id,
            epoch: 1,
            state: nil,
            inboxCapacity: 8,
            environment: SessionEnvironment(
                system: SystemEnvironment(
                    clock: TestClock(),
                    upstream: JournaledSessions.NoUpstream(),
                    logger: JournaledSessions.quiet
                )
            )
        )
    }

    /// A creation journals its session before it adds it: an activation that reads the journal in between (a
    /// second PUT of the same id, seen in CI as eight 200s and no 201) must not add a second copy, and the creation
    /// still adds its own and answers that it made it.
    @Test func aRestoreWhileTheIdIsBeingCreatedIsRefusedAndTheCreationWins() throws {
        let store = SessionStore(capacity: 4)
        let id = SessionID.random()
        var refusedMeanwhile: SessionStore.Refused?
        var seenBeingCreated = false
        let made = try counter(id)
        let insertion = try store.insert(id: id) { () throws(APIError) in
            seenBeingCreated = store.isBeingCreated(id)
            let copy = try counter(id)
            refusedMeanwhile = store.insert(restored: [copy])
            copy.stop()
            return made
        }
        #expect(seenBeingCreated)
        #expect(refusedMeanwhile?.beingCreated.count == 1)
        #expect(refusedMeanwhile?.existing.isEmpty == true)
        guard case .inserted(let session) = insertion else {
            Issue.record("the creation found its own id taken: \(insertion)")
            return
        }
        #expect(session === made)
        #expect(!store.isBeingCreated(id))
        #expect(store.count == 1)

        // Once it is added, a later restore of the same id meets it as existing.
        let late = try counter(id)
        let refused = store.insert(restored: [late])
        late.stop()
        #expect(refused.existing.count == 1 && refused.beingCreated.isEmpty)
        made.stop()
    }
}
