import HTTPServer
public import SessionJournal

/// Durable sessions: restoring what the journal recovered, and creation answered once journaled.
extension SessionService {
    /// `POST /v1/sessions` with a journal: the 201 goes out once the creation record is durable.
    func registerDurableCreation(in router: inout Router) {
        router.route(.post, "/v1/sessions", maxBodySize: configuration.maxEventBodyBytes) {
            [self] (request: Request) async throws -> Response in
            do throws(APIError) {
                let response = try createSession(request)
                try await persistence?.durable()
                return withCORS(response, request)
            } catch {
                return withCORS(Self.problem(error), request)
            }
        }
    }

    /// Restores every recovered session with its id, epoch and revision; its feedbacks start from the restored
    /// state. A session whose system is gone, or whose state or an event no longer decodes, is marked broken:
    /// logged, answered with a `session-broken` problem, and kept in the journal until it is deleted.
    /// Returns the number of sessions restored.
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
                _ = try store.insert { () throws(APIError) in
                    try system.restoreSession(
                        recovered,
                        id: id,
                        inboxCapacity: configuration.inboxCapacity,
                        environment: environment(id),
                        persistence: persistence
                    )
                }
                metrics.sessions.increment()
                restored += 1
            } catch {
                persistence.markBroken(id, reason: error.message)
            }
        }
        return restored
    }
}
