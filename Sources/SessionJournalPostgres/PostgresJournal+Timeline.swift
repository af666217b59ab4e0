public import SessionJournal

/// Part of one session's history, and the list of sessions (issue 32): the events are keyed by (session, rev), so a
/// range of one session's history is one index range. Read without taking the session over.
///
/// Concurrency: called from any thread but the journal's queue; the statements run there in turn with the appends.
extension PostgresJournal {
    public func history(of id: String, from: UInt64, through: UInt64) throws(JournalError) -> SessionHistory? {
        let upto = String(min(through, UInt64(Int64.max)))
        let outcomes = try query([
            .init(name: "peek", parameters: [id]),
            .init(name: "read.snapshot", parameters: [id]),
            .init(name: "read.history.oldest", parameters: [id]),
            .init(name: "read.head", parameters: [id]),
        ])
        guard let row = outcomes[0].rows.first else { return nil }
        var problems: [String] = []
        guard let session = Self.session(row, snapshot: outcomes[1].rows.first, problems: &problems) else {
            return SessionHistory(
                creation: SessionCreation(id: id, system: row[1] ?? "", epoch: 0, state: "null", createdAt: 0),
                snapshots: [],
                events: [],
                problems: problems
            )
        }
        let keptFrom = (outcomes[2].rows.first?[0]).flatMap { $0 }.flatMap { UInt64($0) } ?? session.baseRevision
        let newest = (outcomes[3].rows.first?[0]).flatMap { $0 }.flatMap { UInt64($0) } ?? 0
        var history = SessionHistory(creation: session.creation, snapshots: [], events: [], problems: problems)
        history.keptFrom = keptFrom
        history.head = max(newest, session.baseRevision)
        guard from >= keptFrom else { return history }
        let near = try query([.init(name: "read.history.near", parameters: [id, String(from)])])[0].rows.first
        var base = near.flatMap { Self.kept($0, of: id, problems: &history.problems) }
        if session.baseRevision <= from, base == nil || session.baseRevision > base!.revision,
            session.baseRevision > 0 || keptFrom == 0
        {
            base = KeptSnapshot(revision: session.baseRevision, version: session.baseVersion, state: session.baseState)
        }
        if base == nil, keptFrom == 0 {
            base = KeptSnapshot(revision: 0, version: session.creation.version, state: session.creation.state)
        }
        guard let base, through >= base.revision else { return history }
        let reads = try query([
            .init(name: "read.history.between", parameters: [id, String(base.revision), upto]),
            .init(name: "read.events.range", parameters: [id, String(base.revision), upto]),
        ])
        history.snapshots = [base]
        for row in reads[0].rows {
            if let kept = Self.kept(row, of: id, problems: &history.problems) { history.snapshots.append(kept) }
        }
        history.checkLatest(
            KeptSnapshot(revision: session.baseRevision, version: session.baseVersion, state: session.baseState),
            through: through
        )
        // Every event in the range, gaps and all (a gap a kept snapshot closes is no damage: `InspectionReplay` tells
        // the two apart); one that fails its checksum is left out and named.
        for row in reads[1].rows {
            guard let revision = UInt64(row[0] ?? ""), revision > base.revision else { continue }
            if let event = Self.event(row, revision: revision, of: id) {
                history.events.append(event)
            } else {
                history.problems.append("event \(revision) fails its checksum")
            }
        }
        return history
    }

    public func listSessions(
        system: String?,
        after cursor: SessionListCursor?,
        limit: Int
    ) throws(JournalError) -> [JournaledSession] {
        let parameters: [String?] = [
            String(cursor?.time ?? Int64.max), cursor?.id ?? "", system, String(max(limit, 0)),
        ]
        return try query([.init(name: "list", parameters: parameters)])[0].rows.map { row in
            JournaledSession(
                id: row[0] ?? "",
                system: row[1] ?? "",
                createdAt: Double(row[2] ?? "") ?? 0,
                leftAt: Int64(row[3] ?? "") ?? 0,
                snapshotRevision: UInt64(row[4] ?? "") ?? 0
            )
        }
    }

    public func sessionCounts() throws(JournalError) -> [String: Int] {
        var counts: [String: Int] = [:]
        for row in try query([.init(name: "counts", parameters: [])])[0].rows {
            if let system = row[0] { counts[system] = Int(row[1] ?? "") ?? 0 }
        }
        return counts
    }

    /// Columns: rev, version, state, crc.
    private static func kept(_ row: [String?], of id: String, problems: inout [String]) -> KeptSnapshot? {
        guard let revision = UInt64(row[0] ?? ""), let state = row[2] else { return nil }
        let version = Int(row[1] ?? "") ?? 1
        guard RecordChecksum.snapshot(id, revision, state, version: version) == Int64(row[3] ?? "") else {
            problems.append("kept snapshot at revision \(revision) fails its checksum")
            return nil
        }
        return KeptSnapshot(revision: revision, version: version, state: state)
    }
}
