import Foundation

/// Reading histories back for verification and export: sessions, kept snapshots and events, each read in session
/// order and merged, so that memory holds one batch of sessions at a time.
///
/// Concurrency: runs on the journal's writer queue like every other use of the store.
extension JournalStore {
    func readHistories(batchSize: Int, _ body: ([SessionHistory]) -> Void) throws(JournalError) {
        let sessions = try connection.prepare(JournalSchema.readHistorySessions)
        defer { sessions.finalize() }
        let snapshots = try connection.prepare(JournalSchema.readHistorySnapshots)
        defer { snapshots.finalize() }
        let events = try connection.prepare(JournalSchema.readHistoryEvents)
        defer { events.finalize() }
        var snapshotRow = try snapshots.step()
        var eventRow = try events.step()
        var batch: [SessionHistory] = []
        batch.reserveCapacity(batchSize)
        var ignored: [String] = []
        while try sessions.step() {
            let key = Array(sessions.bytes(0))
            // Rows of sessions before this one (none are expected: the join and the orders agree) are skipped.
            while snapshotRow, snapshots.bytes(0).lexicographicallyPrecedes(key) { snapshotRow = try snapshots.step() }
            while eventRow, events.bytes(0).lexicographicallyPrecedes(key) { eventRow = try events.step() }
            var problems: [String] = []
            guard let recovered = Self.session(from: sessions, problems: &problems) else {
                while snapshotRow, snapshots.bytes(0).elementsEqual(key) { snapshotRow = try snapshots.step() }
                while eventRow, events.bytes(0).elementsEqual(key) { eventRow = try events.step() }
                ignored += problems
                continue
            }
            let creation = recovered.creation
            var kept = [KeptSnapshot(revision: 0, version: creation.version, state: creation.state)]
            while snapshotRow, snapshots.bytes(0).elementsEqual(key) {
                let revision = UInt64(bitPattern: snapshots.int64(1))
                let version = Int(snapshots.int64(2))
                let state = snapshots.text(3)
                if RecordChecksum.snapshot(creation.id, revision, state, version: version) == snapshots.int64(4) {
                    if revision > kept.last!.revision {
                        kept.append(KeptSnapshot(revision: revision, version: version, state: state))
                    }
                } else {
                    problems.append("kept snapshot at revision \(revision) fails its checksum")
                }
                snapshotRow = try snapshots.step()
            }
            if let damage = recovered.damage { problems.append(damage) }
            var history = SessionHistory(creation: creation, snapshots: kept, events: [], problems: problems)
            history.adoptLatest(
                KeptSnapshot(
                    revision: recovered.baseRevision,
                    version: recovered.baseVersion,
                    state: recovered.baseState
                )
            )
            while eventRow, events.bytes(0).elementsEqual(key) {
                let revision = UInt64(bitPattern: events.int64(1))
                if let event = Self.event(from: events, revision: revision) {
                    if revision > (history.events.last?.revision ?? 0) { history.events.append(event) }
                } else {
                    history.problems.append("event \(revision) fails its checksum")
                }
                eventRow = try events.step()
            }
            batch.append(history)
            if batch.count >= batchSize {
                body(batch)
                batch.removeAll(keepingCapacity: true)
            }
        }
        if !batch.isEmpty { body(batch) }
    }
}

extension Journal: SessionHistoryReading {
    /// The number of live sessions.
    public func sessionCount() throws(JournalError) -> Int {
        try withStore { store throws(JournalError) in Int(try store.connection.integer("SELECT count(*) FROM sessions"))
        }
    }

    /// Every live session's history, in batches, read on the writer queue: appends wait until it returns, so run
    /// it before the server takes writes (`--verify-on-start`) or on a journal no server holds (`verify`).
    public func readHistories(batchSize: Int, _ body: ([SessionHistory]) -> Void) throws(JournalError) {
        try withStore { store throws(JournalError) in try store.readHistories(batchSize: max(batchSize, 1), body) }
    }

    /// One session's whole kept history, through the `timeline` index (no scan of the log but its tail).
    public func history(of id: String) throws(JournalError) -> SessionHistory? {
        try withStore { store throws(JournalError) in
            try store.history(of: id, from: 0, through: .max, whole: true)
        }
    }

    /// Part of one session's history through the `timeline` index (see `SessionHistoryReading`).
    public func history(of id: String, from: UInt64, through: UInt64) throws(JournalError) -> SessionHistory? {
        try withStore { store throws(JournalError) in try store.history(of: id, from: from, through: through) }
    }

    /// The sessions the journal holds, newest activity first (see `SessionHistoryReading`).
    public func listSessions(
        system: String?,
        after cursor: SessionListCursor?,
        limit: Int
    ) throws(JournalError) -> [JournaledSession] {
        try withStore { store throws(JournalError) in
            try store.listSessions(system: system, after: cursor, limit: limit)
        }
    }

    /// The sessions the journal holds, by system.
    public func sessionCounts() throws(JournalError) -> [String: Int] {
        try withStore { store throws(JournalError) in try store.sessionCounts() }
    }
}
