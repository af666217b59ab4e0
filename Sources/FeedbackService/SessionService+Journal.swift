import HTTPServer
public import SessionJournal

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
    @discardableResult
    public func restore(_ recovery: JournalRecovery) -> Int {
        guard let persistence else { return 0 }
        var restored = 0
        for recovered in recovery.sessions {
            guard let id = SessionID(recovered.creation.id) else {
                persistence.logger.error("journal holds a session with an invalid id; ignored")
                continue
            }
            guard let system = systems[recovered.creation.system] else {
                persistence.markBroken(id, reason: "its system \"\(recovered.creation.system)\" is not served")
                continue
            }
            do throws(APIError) {
                _ = try store.insert(id: id) { () throws(APIError) in
                    let session = try system.restoreSession(
                        recovered,
                        id: id,
                        inboxCapacity: configuration.inboxCapacity,
                        environment: environment(id),
                        persistence: persistence
                    )
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
                    // A damaged session is journaled afresh (a new creation record, which drops its answers from
                    // the journal): journal the answers that still hold again, after it.
                    if recovered.damage != nil, !recovered.answers.isEmpty {
                        persistence.record(recovered.answers.map { .answered($0) })
                    }
                    return session
                }
                metrics.sessions.increment()
                metrics.sessionsRestored.increment()
                restored += 1
            } catch {
                persistence.markBroken(id, reason: error.message)
            }
        }
        return restored
    }
}
