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
        var meanwhile: SessionStore.Restoring?
        var seenBeingCreated = false
        let made = try counter(id)
        let insertion = try store.insert(id: id) { () throws(APIError) in
            seenBeingCreated = store.isBeingCreated(id)
            let copy = try counter(id)
            meanwhile = store.insert(restored: copy)
            copy.stop()
            return made
        }
        #expect(seenBeingCreated)
        guard case .beingCreated? = meanwhile else {
            Issue.record(
                "a restore during the creation was not refused as being created: \(String(describing: meanwhile))"
            )
            return
        }
        guard case .inserted(let session) = insertion else {
            Issue.record("the creation found its own id taken: \(insertion)")
            return
        }
        #expect(session === made)
        #expect(!store.isBeingCreated(id))
        #expect(store.count == 1)

        // Once it is added, a later restore of the same id meets it as existing, and is handed the store's session to
        // use, not its own copy (which the caller stops).
        let late = try counter(id)
        let outcome = store.insert(restored: late)
        late.stop()
        guard case .existing(let existing) = outcome else {
            Issue.record("a restore of an id the store holds was not refused as existing: \(outcome)")
            return
        }
        #expect(existing === made)
        made.stop()
    }

    /// Sessions used one right after another, within a microsecond, leave memory in the order of their last use: the
    /// use is timed on a clock fine enough that they never tie (a coarse one, 4 ms a tick, made the pick any of them).
    @Test func theLeastRecentlyUsedLeavesFirstWhenUsesAreMicrosecondsApart() throws {
        let store = SessionStore(capacity: 8)
        var sessions: [any HostedSession] = []
        for _ in 0..<8 {
            let id = SessionID.random()
            let made = try counter(id)
            _ = try store.insert(id: id) { () throws(APIError) in made }
            sessions.append(made)
        }
        for session in sessions.reversed() { session.touch() }  // the last made is now the least recently used
        for expected in sessions.reversed().prefix(3) {
            let removed = store.removeLeastRecentlyUsed(sparing: { _ in false })
            #expect(removed?.id == expected.id)
        }
        for session in sessions { session.stop() }
    }
}
