public import Logging
public import Synchronization

/// A session's encoded states: the cache of them (`SnapshotCache`), what a snapshot carries besides its state (the
/// session's epoch, its clients' marks, issue 34) and the memory account its latest state is weighed in.
///
/// An object of its own, which the session owns and its loop's observers (the recorder's, the stream's) hold without
/// holding the session: each step's state is encoded once, by whichever asks first, and the others find it here. A
/// weak reference to the session would have given it a side table, and every retain and release of it on a post's
/// way the runtime's slow path (about 400 instructions a post, measured in session 44). Not generic: the state is
/// encoded by the caller's closure, so its code needs no metadata of the system.
///
/// Thread-safe: the cache and the ledger each sit under a `Mutex`; the lock order is the cache's (or the ledger's) →
/// the account's → the budget's atomics.
@usableFromInline
final class SessionSnapshots: Sendable {
    @usableFromInline
    let epoch: UInt64
    @usableFromInline
    let cached: Mutex<SnapshotCache>
    /// Each client's numbered posts (issue 34).
    @usableFromInline
    let clientLedger: Mutex<ClientLedger>
    /// What the session holds against the service's memory budget; nil when nothing is counted.
    @usableFromInline
    let account: SessionAccount?
    @usableFromInline
    let logger: Logger

    /// `latest` is the starting state's snapshot, when the caller encoded it; `ledger` the restored clients' numbers.
    @usableFromInline
    init(epoch: UInt64, latest: SessionSnapshot?, ledger: ClientLedger, account: SessionAccount?, logger: Logger) {
        self.epoch = epoch
        cached = Mutex(SnapshotCache(latest: latest))
        clientLedger = Mutex(ledger)
        self.account = account
        self.logger = logger
    }

    /// The snapshot at `rev`: cached, or made of `encoding()` (the state at `rev`, encoded) and cached, once per step:
    /// the recorder's checksum, the stream's frame, a post's answer and `GET` share it.
    @inlinable
    func snapshot(at rev: UInt64, encoding: () -> [UInt8]) -> SessionSnapshot {
        let lookup = cached.withLock { $0.lookup(rev) }
        if case .hit(let snapshot) = lookup { return snapshot }
        let cursor = Cursor(epoch: epoch, rev: rev)
        let snapshot = SessionSnapshot(cursor: cursor, state: encoding(), clients: marks(at: rev))
        guard case .newer = lookup else {
            // A step of a batch whose last state is cached already: kept for the step's other reader, not weighed.
            cached.withLock { $0.keepOlder(snapshot) }
            return snapshot
        }
        return cache(snapshot)
    }

    /// Caches `snapshot` unless a later revision is cached, and counts the cached state, of `weight` when known, in
    /// the session's account.
    @inlinable
    func cache(_ snapshot: SessionSnapshot, weight: SessionBudget.Weight? = nil) -> SessionSnapshot {
        let weight = weight ?? account.map { _ in SessionBudget.weigh(snapshot.state) }
        let crossed = cached.withLock { slots -> Bool in
            // The cached revision read in place: `slots.latest!.rev` would copy the whole snapshot out first.
            if let latest = slots.latest?.cursor.rev, latest >= snapshot.rev { return false }
            slots.latest = snapshot
            slots.older = nil
            guard let account, let weight else { return false }
            return account.settleState(weight)
        }
        if crossed, let account {
            logger.warning(
                Logger.Message(
                    stringLiteral: "an effect's events grew the session's state past session.state.max.bytes; it is "
                        + "kept, and client events that leave it as large are refused"
                ),
                metadata: ["bytes": "\(snapshot.state.count)", "limit": "\(account.budget.stateLimit)"]
            )
        }
        return snapshot
    }

    /// Gives the cached snapshot of `rev`, if any, the marks `clients`: a numbered post marked after its step was
    /// observed (queued behind others' events, not on the state it was tried on).
    @inlinable
    func remark(_ rev: UInt64, clients: [UInt8]?) {
        cached.withLock { slots in
            if let latest = slots.latest, latest.cursor.rev == rev {
                slots.latest = latest.with(clients: clients)
            } else if let older = slots.older, older.cursor.rev == rev {
                slots.older = older.with(clients: clients)
            }
        }
    }

    /// The marks of the numbered posts revision `rev` includes, as a snapshot carries them.
    @inlinable
    func marks(at rev: UInt64) -> [UInt8]? {
        clientLedger.withLock { $0.marks(at: rev) }
    }
}
