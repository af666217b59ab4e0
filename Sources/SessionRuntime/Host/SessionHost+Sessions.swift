import CoreMetrics
package import FeedbackJSON

/// Sessions created, found, posted to and deleted: the runtime half of the session routes, which parse the request
/// and render the answer (`SessionService+Handlers`).
extension SessionHost {
    /// Starts a session of system `name` under `id`, from `state` (the system's initial state when nil): the session
    /// and whether it was made now. With `chosenByClient` (a PUT) an existing session of the same system, asked for
    /// without a starting state, is answered as it is (not made); another system or a starting state is 409.
    /// With `effectsPaused` (a fork) the session's feedbacks wait for `resumeEffects`, and its journal says so.
    package func startSession(
        id: SessionID,
        system name: String,
        state: JSONValue?,
        chosenByClient: Bool,
        effectsPaused: Bool = false
    ) throws(APIError) -> (session: any HostedSession, created: Bool) {
        guard let system = systems[name] else {
            throw APIError(
                .systemNotFound,
                "there is no system \"\(name)\"; available: \(systemOrder.joined(separator: ", "))"
            )
        }
        if chosenByClient, let existing = try activeSession(id) {
            return (try existingSession(existing, system: name, startingState: state != nil), false)
        }
        if let refusal = persistence?.writeRefusal() { throw refusal }
        guard !isDraining else {
            throw APIError(
                .draining,
                "the server is shutting down; retry, and another replica will answer",
                retryAfter: 1
            )
        }
        let epoch = UInt64.random(in: 1...UInt64(UInt32.max))
        makeRoom()
        var environment = environment(id)
        environment.effectsPaused = effectsPaused
        let insertion = try store.insert(id: id) { () throws(APIError) in
            try system.startSession(
                id: id,
                epoch: epoch,
                state: state,
                inboxCapacity: limits.inboxCapacity,
                environment: environment,
                persistence: persistence
            )
        }
        switch insertion {
        case .inserted(let session):
            metrics.sessionsCreated.increment()
            metrics.sessions.increment()
            return (session, true)
        case .existing(let existing):
            // Two PUTs for one id raced; the other one created it.
            return (try existingSession(existing, system: name, startingState: state != nil), false)
        }
    }

    /// A PUT's session for an id that is taken: the session itself when the PUT repeats its creation.
    private func existingSession(
        _ session: any HostedSession,
        system: String,
        startingState: Bool
    ) throws(APIError) -> any HostedSession {
        if let fenced = persistence?.fenceProblem(session.id) { throw fenced }
        guard session.systemName == system, !startingState else {
            throw APIError(
                .sessionExists,
                "session \(session.id) already exists (system \(session.systemName)); "
                    + "choose another id, or GET it to continue with it"
            )
        }
        return session
    }

    /// Ends session `id` and removes it from the journal; a passive one is brought back first, so that its loop's end
    /// and its removal are journaled as usual. A session that could not be restored is discarded.
    package func deleteSession(_ id: SessionID) throws(APIError) {
        if let fenced = persistence?.fenceProblem(id) { throw fenced }
        // A removal the journal cannot write would bring the session back at the next start.
        if let refusal = persistence?.writeRefusal() { throw refusal }
        // A quarantined session is deleted without being brought back: its removal record ends the quarantine too.
        if let persistence, store[id] == nil, persistence.quarantineProblem(id) != nil {
            persistence.removed(id)
            return
        }
        guard let session = try activeSession(id).flatMap({ store.remove($0.id) }) else {
            if persistence?.discardBroken(id) == true { return }
            throw Self.notFound(id)
        }
        session.stop()
        followers.end(id, reason: .deleted)
        persistence?.removed(id)
        metrics.sessions.decrement()
        metrics.sessionsEnded.increment()
    }

    /// Session `id`, activated when it is passive; 404 (or the reason it is broken or fenced) when there is none.
    package func session(_ id: SessionID) throws(APIError) -> any HostedSession {
        // A copy another replica took over was dropped before the handler ran (`confirmingOwnership`): a read from
        // it would answer an older revision. A post needs no such look: the fence refuses a superseded copy's append.
        guard let session = try activeSession(id) else { throw persistence?.brokenProblem(id) ?? Self.notFound(id) }
        if let fenced = persistence?.fenceProblem(id) { throw fenced }
        return session
    }

    package static func notFound(_ id: SessionID) -> APIError {
        APIError(.sessionNotFound, "no session \(id): it never existed, was deleted, or expired")
    }

    /// Posts `events` to `session` and calls `completion` once the reducer applied them and they are durable (on the
    /// thread that reduced them or the journal's, often this one before it returns), or at once with the refusal.
    /// `idempotencyKey` and the request's `body` make the post at most once per key.
    package func post(
        _ events: PostedEvents,
        to session: any HostedSession,
        ifMatch: String?,
        idempotencyKey: String?,
        body: [UInt8],
        completion: @escaping @Sendable (Result<SessionSnapshot, APIError>) -> Void
    ) {
        if let refusal = persistence?.writeRefusal() { return completion(.failure(refusal)) }
        guard let key = idempotencyKey else {
            // The plain post: the session counts its events and answers once they are durable.
            return session.postDurably(events, ifMatch: ifMatch, completion: completion)
        }
        let count = events.count
        let eventsApplied = metrics.eventsApplied
        let applied: @Sendable (Result<SessionSnapshot, APIError>) -> Void = { result in
            if case .success = result { eventsApplied.increment(by: count) }
            session.answerOnceJournaled(result, completion)
        }
        guard !key.isEmpty, key.utf8.count <= 255, key.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F }) else {
            return completion(
                .failure(APIError(.invalidRequest, "Idempotency-Key is 1 to 255 visible ASCII characters, e.g. a UUID"))
            )
        }
        // At most once per key: a retry with the same body gets the first answer (which wins over If-Match: the
        // retry of an applied request must not fail), another body is 422, a retry while the first is still
        // running is 409. A request that fails applies nothing, so its key is forgotten and may be used again.
        let claim = IdempotencyClaim(key: key, fingerprint: fingerprints.fingerprint(body))
        switch session.withIdempotencyLedger({ $0.begin(key: key, fingerprint: claim.fingerprint) }) {
        case .replay(let snapshot):
            // A replayed answer waits too: its first request may still be waiting.
            session.answerOnceJournaled(.success(snapshot), completion)
        case .inFlight:
            completion(
                .failure(
                    APIError(
                        .idempotencyInFlight,
                        "a request with Idempotency-Key \(key) is still being applied; retry when it has been answered",
                        retryAfter: 1
                    )
                )
            )
        case .mismatch:
            completion(
                .failure(
                    APIError(
                        .idempotencyMismatch,
                        "Idempotency-Key \(key) was used with another body; use a new key for a new request"
                    )
                )
            )
        case .proceed:
            session.post(events, ifMatch: ifMatch, claim: claim) { result in
                session.withIdempotencyLedger { ledger in
                    switch result {
                    case .success(let snapshot): ledger.complete(key: key, answer: snapshot)
                    case .failure: ledger.abandon(key: key)
                    }
                }
                applied(result)
            }
        }
    }
}

extension SessionHost {
    /// Ends the quarantine of session `id` (a release by an admin, once a fixed build runs): the session can be
    /// activated again. False when it was not quarantined; 409 without a journal, where nothing is ever quarantined.
    package func releaseQuarantine(_ id: SessionID) throws(APIError) -> Bool {
        guard let persistence else { return false }
        return try persistence.releaseQuarantine(id)
    }
}
