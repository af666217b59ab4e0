import CoreMetrics
import Dispatch
import Logging
import SessionJournal
import Synchronization
import SystemKit

/// Durable sessions: activating and passivating them, confirming their ownership, re-anchoring fenced ones.
extension SessionHost {
    /// The session `id` in memory, or, when it is passive (only in the journal), the session brought back from the
    /// journal: its latest snapshot and the events after it are read and folded, its loop starts from that state
    /// (so do its feedbacks), with the revision, epoch and idempotency answers it had. Nil when the journal holds no
    /// such session, or it could not be restored (then it is marked broken). Without a journal: the store's.
    ///
    /// Activations take turns with each other and with passivations (`activation`), so a session is made once, and
    /// only after its passivated copy was sealed: the journal read, which runs on the writer queue after every append
    /// queued before it, then holds everything that copy journaled.
    package func activeSession(_ id: SessionID, forTimer: Bool = false) throws(APIError) -> (any HostedSession)? {
        // A copy whose append the journal refused because another replica took the session over is dropped here,
        // not only by the asynchronous handler, so that a request right after the refusal (a client retrying at
        // once) takes the session back from the journal instead of being refused again by the same copy.
        if let persistence, persistence.isSuperseded(id) { dropSuperseded(id) }
        if let session = store[id] { return session }
        // A session a request is creating right now is not there yet, even though the journal may hold its first
        // records: restoring it would make a second copy (`SessionStore.insert(restored:)` refuses it too).
        guard let persistence, !store.isBeingCreated(id), persistence.brokenProblem(id) == nil else { return nil }
        // Read from the journal at every activation: another replica may have quarantined it.
        if let quarantined = persistence.quarantineProblem(id) { throw quarantined }
        return try activate([id], forTimer: forTimer, persistence: persistence).get()[id]
    }

    /// Activates those of `ids` that are passive, with one journal read for all of them (the timer waker's batch
    /// of due sessions); returns how many it brought back. A full store stops it (the rest stay passive, woken
    /// again at the next look); a journal that cannot be read is logged.
    @discardableResult
    func activateForTimers(_ ids: [SessionID]) -> Int {
        guard let persistence else { return 0 }
        // A quarantined session's timers do not fire: it stays passive (its deadline is looked at again each second).
        let passive = ids.filter {
            store[$0] == nil && persistence.brokenProblem($0) == nil && persistence.quarantineProblem($0) == nil
        }
        guard !passive.isEmpty else { return 0 }
        switch activate(passive, forTimer: true, persistence: persistence) {
        case .success(let sessions):
            return sessions.count
        case .failure(let error):
            persistence.logger.warning("sessions not woken for their timers", metadata: ["error": "\(error.message)"])
            return 0
        }
    }

    /// Brings `ids` back from the journal under the activation lock (see `activeSession`): the sessions found in
    /// memory or restored, by id. Fails when the journal cannot be read, or (for the first id that does not fit)
    /// when the store is full and nothing can leave it.
    private func activate(
        _ ids: [SessionID],
        forTimer: Bool,
        persistence: SessionPersistence
    ) -> Result<[SessionID: any HostedSession], APIError> {
        let start = DispatchTime.now().uptimeNanoseconds
        return activation.withLock { _ -> Result<[SessionID: any HostedSession], APIError> in
            var found: [SessionID: any HostedSession] = [:]
            var missing: Set<String> = []
            for id in ids {
                if let session = store[id] { found[id] = session } else { missing.insert(id.description) }
            }
            guard !missing.isEmpty else { return .success(found) }
            let recovered: [RecoveredSession]
            do throws(JournalError) {
                recovered = try persistence.journal.recover(only: missing)
            } catch {
                return .failure(SessionPersistence.notRead(error))
            }
            var restoredCount: Int64 = 0
            for session in recovered {
                guard let restored = restoredSession(session, persistence: persistence) else {
                    metrics.sessionsPassive.decrement()  // broken now: counted there
                    continue
                }
                makeRoomLocked()
                switch store.insert(restored: restored) {
                case .inserted:
                    break
                case .full:
                    restored.stop()
                    return found.isEmpty ? .failure(store.full) : .success(found)
                case .existing(let existing):
                    // The store's session, not this copy (before, the stopped copy was handed back).
                    restored.stop()
                    found[existing.id] = existing
                    continue
                case .beingCreated:
                    restored.stop()
                    continue
                }
                found[restored.id] = restored
                restoredCount += 1
                metrics.sessions.increment()
                metrics.sessionsPassive.decrement()
                (forTimer ? metrics.sessionsWoken : metrics.sessionsActivated).increment()
            }
            // A batch's time is shared by the sessions it restored.
            let elapsed = Int64(DispatchTime.now().uptimeNanoseconds - start)
            for _ in 0..<restoredCount { metrics.activationDuration.recordNanoseconds(elapsed / restoredCount) }
            return .success(found)
        }
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
            let session = store.removeLeastRecentlyUsed(sparing: followers.isFollowing)
        else { return }
        session.passivate()
        metrics.sessions.decrement()
        metrics.sessionsPassive.increment()
        metrics.sessionsPassivatedForRoom.increment()
    }

    /// Calls `next` once session `id` (a request's), when a copy of it is in memory, is confirmed to be this
    /// replica's still, or with the problem when the journal could not say. When the journal says another replica
    /// owns the session now, the copy is dropped first (its loop stopped, its streams ended, counted passive), so
    /// that the request activates the session from the journal, taking it back with everything the other replica
    /// wrote. A journal on one machine (or no copy in memory) calls `next` at once; a shared one after a query that
    /// the reads waiting meanwhile share, and then on a global queue, since the request may read the journal next.
    package func confirmingOwnership(of id: SessionID?, _ next: @escaping @Sendable (APIError?) -> Void) {
        guard let persistence, persistence.journal.sharesSessions, let id, let copy = store[id]
        else { return next(nil) }
        persistence.journal.confirmOwnership(of: id.description) { [self] result in
            DispatchQueue.global().async { [self] in
                switch result {
                case .success(true):
                    next(nil)
                case .success(false):
                    drop(copy)
                    next(nil)
                case .failure(let error):
                    next(SessionPersistence.notRead(error))
                }
            }
        }
    }

    /// Drops `copy`, a session another replica took over, unless another copy replaced it in the store meanwhile;
    /// returns whether it did.
    @discardableResult
    func drop(_ copy: any HostedSession) -> Bool {
        activation.withLock { _ in
            guard let current = store[copy.id], current === copy else { return false }
            removeSuperseded(copy.id)
            return true
        }
    }

    /// Drops the copy of session `id` that a shared journal fenced (another replica took the session over). A copy
    /// activated here since (whose appends work) is kept.
    func dropSuperseded(_ id: SessionID) {
        activation.withLock { _ in
            defer { persistence?.unfence(id) }
            guard let session = store[id] else { return }
            let failed = FailureFlag()
            session.whenJournaled { problem in if problem != nil { failed.set() } }
            guard failed.isSet else { return }
            removeSuperseded(id)
        }
    }

    /// Under `activation`: removes session `id`'s superseded copy: its loop stops (effects cancelled), its streams end
    /// with `event: moved` (clients reconnect by their cursor, and the balancer sends them to the new owner), and it
    /// counts as passive again.
    private func removeSuperseded(_ id: SessionID) {
        guard let removed = store.remove(id) else { return }
        removed.supersede()
        followers.end(id, reason: .moved)
        metrics.sessions.decrement()
        metrics.sessionsPassive.increment()
        metrics.sessionsMovedAway.increment()
    }

    /// Replaces every fenced session by one re-anchored from what the journal holds: a session of which the journal
    /// holds nothing (its creation was never written) is removed; any other is restored at the journal's revision
    /// under a new epoch and journaled afresh, and its fence is lifted once that is durable. Its events that the
    /// journal did not keep (none of them was acknowledged) are dropped, its streams end with `event: moved` (clients
    /// reconnect to the new epoch), its feedbacks start from the restored state. Runs when the journal is healthy
    /// again, and again a second later while sessions stay fenced and the journal is healthy.
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
                    followers.end(id, reason: .moved)
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
            followers.end(id, reason: .moved)
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
        // Its effects start again from the restored state: their first upstream fetch waits its turn.
        var environment = environment(id)
        environment.system.upstream = activationThrottle.upstream(for: environment.system.upstream)
        do throws(APIError) {
            let session = try system.restoreSession(
                recovered,
                id: id,
                inboxCapacity: limits.inboxCapacity,
                environment: environment,
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

/// Whether a session's durability wait answered with a failure at once (its recorder failed before).
private final class FailureFlag: Sendable {
    private let value = Atomic<Bool>(false)

    func set() { value.store(true, ordering: .relaxed) }

    var isSet: Bool { value.load(ordering: .relaxed) }
}
