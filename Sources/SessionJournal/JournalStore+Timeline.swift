/// Reading part of one session's history through the `timeline` index: what the inspection routes and the export read,
/// at the cost of that part, not of the log.
///
/// Concurrency: runs on the journal's writer queue like every other use of the store.
extension JournalStore {
    /// The part of session `id`'s history from the newest kept state at or before `from` to revision `through`:
    /// that state first in `snapshots` (then the kept snapshots after it, up to `through`), the events after it up to
    /// `through`, `keptFrom` and `head`. Nil when the journal holds no such session. When `from` is before `keptFrom`
    /// the answer has no snapshot and no event: the caller says that the revision is no longer kept. The events are
    /// every one the log holds in the range, gaps and all: a gap that a kept snapshot closes (the steps an effect took
    /// before the session's recorder was attached, at its creation or a restore, which the snapshot journaled with its
    /// first step covers) is no damage, and the replay (`InspectionReplay`) tells the two apart.
    ///
    /// `whole`: everything kept, as `verify` and the export read it: the creation's state at revision 0, every kept
    /// snapshot and the latest, and every event the log still holds, gaps and all (the replay finds where they start).
    func history(
        of id: String,
        from: UInt64,
        through: UInt64,
        whole: Bool = false
    ) throws(JournalError) -> SessionHistory? {
        let through = min(through, UInt64(Int64.max))
        let sessions = try connection.prepare(JournalSchema.readSession)
        defer { sessions.finalize() }
        sessions.bind(1, id)
        guard try sessions.step() else { return nil }
        var problems: [String] = []
        let generation = sessions.int64(5)
        guard let recovered = Self.session(from: sessions, problems: &problems) else {
            return SessionHistory(
                creation: SessionCreation(id: id, system: sessions.text(1), epoch: 0, state: "null", createdAt: 0),
                snapshots: [],
                events: [],
                problems: problems
            )
        }
        if let damage = recovered.damage { problems.append(damage) }
        let creation = recovered.creation
        let oldest = try optionalInteger(JournalSchema.readOldestHistory, id)
        let keptFrom = oldest.map { UInt64(bitPattern: $0) } ?? recovered.baseRevision
        // The base: a kept snapshot, the latest one, or the creation's state while revision 0 is kept.
        var base: KeptSnapshot?
        if whole {
            base = KeptSnapshot(revision: 0, version: creation.version, state: creation.state)
        } else if from >= keptFrom {
            let nearest = try connection.prepare(JournalSchema.readNearestHistory)
            defer { nearest.finalize() }
            nearest.bind(1, id)
            nearest.bind(2, Int64(bitPattern: from))
            if try nearest.step() {
                base = try Self.kept(nearest, of: id, problems: &problems)
            }
            if recovered.baseRevision <= from, recovered.baseRevision > (base?.revision ?? 0) || base == nil {
                if recovered.baseRevision > 0 || keptFrom == 0 {
                    base = KeptSnapshot(
                        revision: recovered.baseRevision,
                        version: recovered.baseVersion,
                        state: recovered.baseState
                    )
                }
            }
            if base == nil, keptFrom == 0 {
                base = KeptSnapshot(revision: 0, version: creation.version, state: creation.state)
            }
        }
        var history = SessionHistory(creation: creation, snapshots: [], events: [], problems: problems)
        history.keptFrom = keptFrom
        history.head = try head(of: id, generation: generation, latest: recovered.baseRevision)
        guard let base, through >= base.revision else { return history }
        history.snapshots = [base]
        let between = try connection.prepare(JournalSchema.readHistoryBetween)
        defer { between.finalize() }
        between.bind(1, id)
        between.bind(2, Int64(bitPattern: base.revision))
        between.bind(3, Int64(bitPattern: through))
        while try between.step() {
            if let kept = try Self.kept(between, of: id, problems: &history.problems) { history.snapshots.append(kept) }
        }
        if !whole {
            history.checkLatest(
                KeptSnapshot(
                    revision: recovered.baseRevision,
                    version: recovered.baseVersion,
                    state: recovered.baseState
                ),
                through: through
            )
        }
        if whole {
            history.adoptLatest(
                KeptSnapshot(
                    revision: recovered.baseRevision,
                    version: recovered.baseVersion,
                    state: recovered.baseState
                )
            )
        }
        try readEvents(
            of: id,
            after: base.revision,
            through: through,
            generation: generation,
            into: &history
        )
        return history
    }

    /// The events of `id` in (`after`, `through`]: the indexed ones, then the log's tail, in revision order, each
    /// revision once, gaps and all; one that fails its checksum is left out and named in `problems`.
    private func readEvents(
        of id: String,
        after: UInt64,
        through: UInt64,
        generation: Int64,
        into history: inout SessionHistory
    ) throws(JournalError) {
        let indexed = try connection.prepare(JournalSchema.readTimelineEvents)
        defer { indexed.finalize() }
        indexed.bind(1, id)
        indexed.bind(2, Int64(bitPattern: after))
        indexed.bind(3, Int64(bitPattern: min(through, UInt64(Int64.max))))
        var next = after + 1
        func take(_ row: SQLiteStatement) {
            let revision = UInt64(bitPattern: row.int64(1))
            guard revision >= next else { return }
            if let event = Self.event(from: row, revision: revision) {
                history.events.append(event)
            } else {
                history.problems.append("event \(revision) fails its checksum")
            }
            next = revision + 1
        }
        while try indexed.step() {
            take(indexed)
        }
        let tail = try connection.prepare(JournalSchema.readTailEvents)
        defer { tail.finalize() }
        tail.bind(1, id)
        tail.bind(2, Int64(bitPattern: next - 1))
        tail.bind(3, Int64(bitPattern: min(through, UInt64(Int64.max))))
        tail.bind(4, timelineThrough)
        tail.bind(5, generation)
        while try tail.step() {
            take(tail)
        }
    }

    /// The newest revision the journal holds of `id`: its latest snapshot's, or its newest event's.
    private func head(of id: String, generation: Int64, latest: UInt64) throws(JournalError) -> UInt64 {
        var head = latest
        if let indexed = try optionalInteger(JournalSchema.readTimelineHead, id) {
            head = max(head, UInt64(bitPattern: indexed))
        }
        let tail = try connection.prepare(
            "SELECT max(rev) FROM events WHERE seq > ?2 AND seq > ?3 AND session = ?1"
        )
        defer { tail.finalize() }
        tail.bind(1, id)
        tail.bind(2, timelineThrough)
        tail.bind(3, generation)
        if try tail.step(), !tail.isNull(0) { head = max(head, UInt64(bitPattern: tail.int64(0))) }
        return head
    }

    private func optionalInteger(_ sql: String, _ id: String) throws(JournalError) -> Int64? {
        let statement = try connection.prepare(sql)
        defer { statement.finalize() }
        statement.bind(1, id)
        guard try statement.step(), !statement.isNull(0) else { return nil }
        return statement.int64(0)
    }

    /// Columns: session, rev, version, state, crc.
    private static func kept(
        _ row: SQLiteStatement,
        of id: String,
        problems: inout [String]
    ) throws(JournalError) -> KeptSnapshot? {
        let revision = UInt64(bitPattern: row.int64(1))
        let version = Int(row.int64(2))
        let state = row.text(3)
        guard RecordChecksum.snapshot(id, revision, state, version: version) == row.int64(4) else {
            problems.append("kept snapshot at revision \(revision) fails its checksum")
            return nil
        }
        return KeptSnapshot(revision: revision, version: version, state: state)
    }

    /// Sessions the journal holds, newest activity first, after `cursor`, of `system` when given.
    func listSessions(
        system: String?,
        after cursor: SessionListCursor?,
        limit: Int
    ) throws(JournalError)
        -> [JournaledSession]
    {
        let list = try connection.prepare(JournalSchema.listSessions)
        defer { list.finalize() }
        list.bind(1, cursor?.time ?? Int64.max)
        list.bind(2, cursor?.id ?? "")
        list.bind(3, system)
        list.bind(4, Int64(max(limit, 0)))
        var sessions: [JournaledSession] = []
        while try list.step() {
            sessions.append(
                JournaledSession(
                    id: list.text(0),
                    system: list.text(1),
                    createdAt: list.double(2),
                    leftAt: list.int64(3),
                    snapshotRevision: UInt64(bitPattern: list.int64(4))
                )
            )
        }
        return sessions
    }

    /// The sessions the journal holds, by system.
    func sessionCounts() throws(JournalError) -> [String: Int] {
        let counts = try connection.prepare(JournalSchema.countSessionsBySystem)
        defer { counts.finalize() }
        var result: [String: Int] = [:]
        while try counts.step() { result[counts.text(0)] = Int(counts.int64(1)) }
        return result
    }
}
