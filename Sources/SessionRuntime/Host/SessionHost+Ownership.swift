import Dispatch
import Logging
import SessionJournal
import Synchronization

/// Followed sessions that another replica took: found by a look at the journal every second, not at the next request.
extension SessionHost {
    /// How often the followed sessions' ownership is confirmed (`watchOwnership`).
    package static let ownershipWatchInterval = Duration.seconds(1)

    /// With a journal that other replicas share: every `interval`, confirms that this replica still owns each session
    /// in memory that something follows (its streams), and drops each copy that another replica took over (its
    /// loop stops, its streams end with `event: moved`, it counts passive), until the task that runs this is
    /// cancelled. A replica learns otherwise only at a request or a fenced append, and with the balancer sending
    /// the session's posts to the new owner, neither comes: the streams here would stay open and silent for good.
    ///
    /// Costs one ownership check per followed session and round: the journal sends the checks waiting together (up
    /// to 256 in one query), so a round of 30 followed sessions is one query. A session nobody follows here costs
    /// nothing; a session that stays this replica's is never dropped by it.
    package func watchOwnership(every interval: Duration = SessionHost.ownershipWatchInterval) async {
        guard let persistence, persistence.journal.sharesSessions else { return }
        while !Task.isCancelled {
            do {
                try await Task.sleep(for: interval)
            } catch {
                return
            }
            _ = await confirmFollowedOwnership(persistence)
        }
    }

    /// One round of `watchOwnership`: returns how many copies it dropped, once every check answered.
    @discardableResult
    package func confirmFollowedOwnership() async -> Int {
        guard let persistence, persistence.journal.sharesSessions else { return 0 }
        return await confirmFollowedOwnership(persistence)
    }

    private func confirmFollowedOwnership(_ persistence: SessionPersistence) async -> Int {
        let copies = followers.followed.compactMap { store[$0] }
        guard !copies.isEmpty else { return 0 }
        let round = OwnershipRound(pending: copies.count)
        return await withCheckedContinuation { (done: CheckedContinuation<Int, Never>) in
            for copy in copies {
                persistence.journal.confirmOwnership(of: copy.id.description) { [self] result in
                    // On the journal's queue: the drop takes the activation lock, so it runs elsewhere.
                    DispatchQueue.global().async { [self] in
                        var dropped = false
                        switch result {
                        case .success(true):
                            break
                        case .success(false):
                            dropped = drop(copy)
                            if dropped {
                                persistence.logger.info(
                                    "session taken over by another replica; its streams here end",
                                    metadata: ["session.id": "\(copy.id)"]
                                )
                            }
                        case .failure(let error):
                            // The next round asks again; a request meanwhile confirms on its own.
                            persistence.logger.debug(
                                "ownership of a followed session not confirmed",
                                metadata: ["session.id": "\(copy.id)", "error": "\(error)"]
                            )
                        }
                        if let total = round.finish(dropped: dropped) { done.resume(returning: total) }
                    }
                }
            }
        }
    }
}

/// The checks of one round still waiting, and the copies dropped so far. Thread-safe (a `Mutex`).
private final class OwnershipRound: Sendable {
    private let state: Mutex<(pending: Int, dropped: Int)>

    init(pending: Int) {
        state = Mutex((pending, 0))
    }

    /// Counts one check answered; returns the copies dropped in the round when it was the last.
    func finish(dropped: Bool) -> Int? {
        state.withLock { state in
            state.pending -= 1
            if dropped { state.dropped += 1 }
            return state.pending == 0 ? state.dropped : nil
        }
    }
}
