import Dispatch
import HTTPServer
public import SessionJournal
import Synchronization

/// Durable sessions: restoring what the journal recovered, and creation answered once journaled.
extension SessionService {
    /// Answers a request that may create a session: at once without a journal; with one, once everything
    /// journaled before (the creation record among it) is durable. A failed commit is a 503 saying so.
    func answerOnceDurable(
        _ request: Request,
        _ responder: Responder,
        _ body: () throws(APIError) -> Response
    ) {
        let response: Response
        do {
            response = try body()
        } catch {
            return responder.respond(withCORS(Self.problem(error), request))
        }
        guard let persistence, (200..<300).contains(response.status) else {
            return responder.respond(withCORS(response, request))
        }
        persistence.durable { [self] failure in
            responder.respond(withCORS(failure.map { Self.problem($0) } ?? response, request))
        }
    }

    /// Restores every recovered session with its id, epoch and revision; its feedbacks start from the restored
    /// state. A session whose system is gone, or whose state or an event no longer decodes, is marked broken:
    /// logged, answered with a `session-broken` problem, and kept in the journal until it is deleted.
    /// Each restored session's idempotency ledger gets the answers the journal kept, so a retry of a request
    /// answered before the restart is answered again, not applied twice. Returns the number of sessions restored.
    ///
    /// Sessions are independent, so they are restored on every usable core: `concurrentPerform` hands out chunks
    /// of `restoreChunk` sessions, and a core that is busy with other work simply takes fewer of them.
    @discardableResult
    public func restore(_ recovery: JournalRecovery) -> Int {
        guard let persistence else { return 0 }
        let sessions = recovery.sessions
        store.reserveCapacity(store.count + sessions.count)
        let chunks = (sessions.count + Self.restoreChunk - 1) / Self.restoreChunk
        let restored = Atomic<Int>(0)
        DispatchQueue.concurrentPerform(iterations: chunks) { chunk in
            let first = chunk * Self.restoreChunk
            var made: [any HostedSession] = []
            made.reserveCapacity(Self.restoreChunk)
            for index in first..<min(first + Self.restoreChunk, sessions.count) {
                if let session = restoredSession(sessions[index], persistence: persistence) { made.append(session) }
            }
            let refused = store.insert(restored: made)
            for session in refused.full {
                session.stop()
                persistence.markBroken(session.id, reason: store.full.message)
            }
            for session in refused.existing { session.stop() }
            let count = made.count - refused.full.count - refused.existing.count
            metrics.sessions.increment(by: Double(count))
            metrics.sessionsRestored.increment(by: count)
            restored.add(count, ordering: .relaxed)
        }
        return restored.load(ordering: .relaxed)
    }

    /// Sessions per unit of work of the parallel restore: enough to make a hand-out negligible, few enough that
    /// the cores finish together.
    static let restoreChunk = 256

    /// Rebuilds one recovered session, not yet in the store; nil when it was marked broken or ignored.
    private func restoredSession(
        _ recovered: RecoveredSession,
        persistence: SessionPersistence
    ) -> (any HostedSession)? {
        guard let id = SessionID(recovered.creation.id) else {
            persistence.logger.error("journal holds a session with an invalid id; ignored")
            return nil
        }
        guard let system = systems[recovered.creation.system] else {
            persistence.markBroken(id, reason: "its system \"\(recovered.creation.system)\" is not served")
            return nil
        }
        do throws(APIError) {
            let session = try system.restoreSession(
                recovered,
                id: id,
                inboxCapacity: configuration.inboxCapacity,
                environment: environment(id),
                persistence: persistence
            )
            Self.refillLedger(of: session, from: recovered, persistence: persistence)
            return session
        } catch {
            persistence.markBroken(id, reason: error.message)
            return nil
        }
    }

    /// Gives a restored session's idempotency ledger the answers the journal kept, oldest first.
    private static func refillLedger(
        of session: any HostedSession,
        from recovered: RecoveredSession,
        persistence: SessionPersistence
    ) {
        guard !recovered.answers.isEmpty else { return }
        session.withIdempotencyLedger { ledger in
            for answer in recovered.answers {
                ledger.remember(
                    key: answer.key,
                    fingerprint: answer.fingerprint,
                    answer: SessionSnapshot(
                        cursor: Cursor(epoch: answer.epoch, rev: answer.revision),
                        state: Array(answer.state.utf8)
                    )
                )
            }
        }
        // A damaged session is journaled afresh (a new creation record, which drops its answers from the journal):
        // journal the answers that still hold again, after it.
        if recovered.damage != nil {
            persistence.record(recovered.answers.map { .answered($0) })
        }
    }
}
