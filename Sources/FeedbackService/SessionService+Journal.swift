import Dispatch
import HTTPServer
import SessionJournal
import Synchronization

/// Durable sessions: restoring what the journal recovered, and creation answered once journaled.
extension SessionService {
    /// Answers a request that may create a session once everything the session journaled so far (its creation
    /// record among it) is durable: at once without a journal. A failed write is a 503 (507 for a full disk).
    func answerOnceDurable(
        _ request: Request,
        _ responder: Responder,
        _ body: () throws(APIError) -> (Response, any HostedSession)
    ) {
        let response: Response
        let session: any HostedSession
        do {
            (response, session) = try body()
        } catch {
            return responder.respond(withCORS(Self.problem(error), request))
        }
        session.whenJournaled { [self] problem in
            responder.respond(withCORS(problem.map { Self.problem($0) } ?? response, request))
        }
    }

    /// The session `id` in memory, or, when it is passive (only in the journal), the session brought back from the
    /// journal: its latest snapshot and the events after it are read and folded, its loop starts from that state
    /// (so do its feedbacks), with the revision, epoch and idempotency answers it had. Nil when the journal holds no
    /// such session, or it could not be restored (then it is marked broken). Without a journal: the store's.
    ///
    /// Activations take turns with each other and with passivations (`activation`), so a session is made once, and
    /// only after its passivated copy was sealed: the journal read, which runs on the writer queue after every append
    /// queued before it, then holds everything that copy journaled.
    func activeSession(_ id: SessionID, forTimer: Bool = false) throws(APIError) -> (any HostedSession)? {
        if let session = store[id] { return session }
        guard let persistence, persistence.brokenProblem(id) == nil else { return nil }
        let start = DispatchTime.now().uptimeNanoseconds
        return try activation.withLock { _ -> Result<(any HostedSession)?, APIError> in
            if let session = store[id] { return .success(session) }
            let recovered: [RecoveredSession]
            do throws(JournalError) {
                recovered = try persistence.journal.recover(only: [id.description])
            } catch {
                return .failure(SessionPersistence.notRead(error))
            }
            guard let first = recovered.first else { return .success(nil) }
            guard let session = restoredSession(first, persistence: persistence) else {
                metrics.sessionsPassive.decrement()  // broken now: counted there
                return .success(nil)
            }
            makeRoomLocked()
            let refused = store.insert(restored: [session])
            if !refused.full.isEmpty {
                session.stop()
                return .failure(store.full)
            }
            if let existing = refused.existing.first {
                session.stop()
                return .success(existing)
            }
            metrics.sessions.increment()
            metrics.sessionsPassive.decrement()
            (forTimer ? metrics.sessionsWoken : metrics.sessionsActivated).increment()
            metrics.activationDuration.recordNanoseconds(Int64(DispatchTime.now().uptimeNanoseconds - start))
            return .success(session)
        }.get()
    }

    /// With a journal, when the store is full: passivates the least recently used session nobody watches, so that
    /// another can be created or activated. Without a journal there is nothing to passivate into, and a full store
    /// refuses (503).
    func makeRoom() {
        guard persistence != nil, store.isFull else { return }
        activation.withLock { _ in makeRoomLocked() }
    }

    /// `makeRoom` under the activation lock.
    func makeRoomLocked() {
        guard persistence != nil, store.isFull,
            let session = store.removeLeastRecentlyUsed(sparing: streams.isFollowing)
        else { return }
        session.passivate()
        metrics.sessions.decrement()
        metrics.sessionsPassive.increment()
        metrics.sessionsPassivatedForRoom.increment()
    }

    /// Replaces every fenced session by one re-anchored from what the journal holds: a session of which the journal
    /// holds nothing (its creation was never written) is removed; any other is restored at the journal's revision
    /// under a new epoch and journaled afresh, and its fence is lifted once that is durable. Its events that the
    /// journal did not keep (none of them was acknowledged) are dropped, its streams are closed (clients reconnect
    /// to the new epoch), its feedbacks start from the restored state. Runs when the journal is healthy again, and
    /// again a second later while sessions stay fenced and the journal is healthy.
    func reanchorFencedSessions() {
        guard let persistence else { return }
        persistence.reanchorOnce { reanchor(persistence) }
    }

    private func reanchor(_ persistence: SessionPersistence) {
        let ids = persistence.fencedSessions
        guard !ids.isEmpty, persistence.writeRefusal() == nil else { return }
        let recovered: [String: RecoveredSession]
        do {
            let sessions = try persistence.journal.recover(only: Set(ids.map(\.description)))
            recovered = Dictionary(sessions.map { ($0.creation.id, $0) }) { first, _ in first }
        } catch {
            persistence.logger.error("journal: fenced sessions cannot be read back", metadata: ["error": "\(error)"])
            return retryReanchoring()
        }
        for id in ids {
            guard var session = recovered[id.description] else {
                if let gone = store.remove(id) {
                    gone.stop()
                    streams.end(id, reason: nil)
                    metrics.sessions.decrement()
                }
                persistence.unfence(id)
                continue
            }
            // Journaled afresh under a new epoch, as a session restored short of its last events is.
            session.damage = session.damage ?? "re-anchored after a failed journal write"
            guard let replacement = restoredSession(session, persistence: persistence) else {
                if store.remove(id) != nil { metrics.sessions.decrement() }
                persistence.unfence(id)
                continue
            }
            guard let old = store.replace(replacement) else {
                replacement.stop()  // deleted or expired meanwhile
                persistence.unfence(id)
                continue
            }
            old.stop()
            streams.end(id, reason: nil)
            persistence.logger.info(
                "session re-anchored from the journal",
                metadata: ["session.id": "\(id)", "rev": "\(session.revision)"]
            )
            replacement.whenJournaled { problem in
                if problem == nil { persistence.unfence(id) }
            }
        }
        retryReanchoring()
    }

    /// Tries the fenced sessions again in a second, unless none is left.
    private func retryReanchoring() {
        guard persistence?.fencedSessions.isEmpty == false else { return }
        DispatchQueue.global().asyncAfter(deadline: .now() + 1) { [weak self] in self?.reanchorFencedSessions() }
    }

    /// Rebuilds one recovered session, not yet in the store; nil when it was marked broken or ignored.
    func restoredSession(
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
            if error.code == .sessionBroken {
                persistence.markBroken(id, reason: error.message)
            } else {
                persistence.markBroken(id, problem: error)
            }
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
    }
}
