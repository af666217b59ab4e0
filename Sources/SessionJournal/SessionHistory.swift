/// A snapshot the journal kept: the state at `revision` as JSON text of schema `version`.
public struct KeptSnapshot: Sendable, Equatable {
    /// The revision of the state.
    public var revision: UInt64
    /// The system's schema version of `state`.
    public var version: Int
    /// The state as JSON text.
    public var state: String

    /// Creates a kept snapshot.
    public init(revision: UInt64, version: Int, state: String) {
        self.revision = revision
        self.version = version
        self.state = state
    }
}

/// What the journal holds of one session for verification and export: its creation, the snapshots it kept (the
/// initial state at revision 0 first, the latest last) and the events it kept, in revision order.
public struct SessionHistory: Sendable, Equatable {
    /// The creation record.
    public var creation: SessionCreation
    /// The kept states in revision order, each revision once: the initial state (revision 0), `history`'s snapshots
    /// and the latest snapshot.
    public var snapshots: [KeptSnapshot]
    /// The kept events of the current incarnation, in revision order; an event that fails its checksum is left out
    /// and named in `problems`.
    public var events: [JournalEvent]
    /// What did not read back (a checksum that failed), one line each.
    public var problems: [String]
    /// The first revision whose state the journal can still give: its oldest kept snapshot's (0 while the creation's
    /// state is kept). Set by the ranged read (`history(of:from:through:)`); 0 otherwise.
    public var keptFrom: UInt64 = 0
    /// The newest revision the journal holds of the session. Set by the ranged read; 0 otherwise.
    public var head: UInt64 = 0

    /// Creates a history.
    public init(
        creation: SessionCreation,
        snapshots: [KeptSnapshot],
        events: [JournalEvent],
        problems: [String] = []
    ) {
        self.creation = creation
        self.snapshots = snapshots
        self.events = events
        self.problems = problems
    }
}

extension SessionHistory {
    /// Adds the latest snapshot (what an activation loads) to a whole history's snapshots: after the kept ones when it
    /// is newer; when a kept snapshot has its revision, the two must agree, else a problem says so (issue 32, item 5:
    /// a latest snapshot changed with its record checksum recomputed passed `verify` as identical, since only the kept
    /// one at that revision was compared).
    package mutating func adoptLatest(_ latest: KeptSnapshot) {
        if let kept = snapshots.first(where: { $0.revision == latest.revision }) {
            if kept.state != latest.state || kept.version != latest.version {
                problems.append(
                    "the latest snapshot at revision \(latest.revision) differs from the kept snapshot at that revision"
                )
            }
        } else if latest.revision > (snapshots.last?.revision ?? 0) {
            snapshots.append(latest)
        }
    }

    /// Puts the latest snapshot (what an activation loads) among the snapshots a replay compares when it lies in the
    /// range read, so that one changed with its record checksum recomputed is caught too; one at the range's first
    /// revision that differs from the kept snapshot there is a problem.
    package mutating func checkLatest(_ latest: KeptSnapshot, through: UInt64) {
        guard let base = snapshots.first, latest.revision >= base.revision, latest.revision <= through else { return }
        if latest.revision == base.revision {
            if latest.state != base.state || latest.version != base.version {
                problems.append(
                    "the latest snapshot at revision \(latest.revision) differs from the kept snapshot at that revision"
                )
            }
            return
        }
        guard !snapshots.contains(latest) else { return }
        let index = snapshots.firstIndex { $0.revision > latest.revision } ?? snapshots.count
        snapshots.insert(latest, at: index)
    }
}

/// A journal whose sessions' histories can be read back: what `feedback-host verify` and the export route need, and
/// nothing else of a journal, so that any journal (SQLite, another database) can serve them.
public protocol SessionHistoryReading: Sendable {
    /// The number of live sessions.
    func sessionCount() throws(JournalError) -> Int
    /// Calls `body` with every live session's history, in batches of at most `batchSize` sessions, in id order.
    func readHistories(batchSize: Int, _ body: ([SessionHistory]) -> Void) throws(JournalError)
    /// The history of one session, nil when the journal holds no such session.
    func history(of id: String) throws(JournalError) -> SessionHistory?
    /// Part of one session's history, at the cost of that part (an index range, not a scan of the journal): the
    /// newest kept state at or before `from` first in `snapshots` (then the kept snapshots after it up to
    /// `through`), the events after that state up to `through`, and `keptFrom` and `head`. No snapshot and no event
    /// when `from` is before `keptFrom` (no longer kept). Nil when the journal holds no such session.
    func history(of id: String, from: UInt64, through: UInt64) throws(JournalError) -> SessionHistory?
    /// The sessions the journal holds, the most recently active first (by the time they last left memory; sessions
    /// without one last), after `cursor`, of `system` when given, at most `limit`.
    func listSessions(
        system: String?,
        after cursor: SessionListCursor?,
        limit: Int
    ) throws(JournalError)
        -> [JournaledSession]
    /// The sessions the journal holds, counted by system.
    func sessionCounts() throws(JournalError) -> [String: Int]
}

/// A session as the journal's list shows it.
public struct JournaledSession: Sendable, Equatable {
    /// The session's id.
    public var id: String
    /// Its system's name.
    public var system: String
    /// When it was created, seconds since 1970.
    public var createdAt: Double
    /// When it last left memory, milliseconds since 1970; 0 when the journal does not know.
    public var leftAt: Int64
    /// The revision of its latest snapshot (a passive session's revision, for a settled one).
    public var snapshotRevision: UInt64

    /// Creates an entry.
    public init(id: String, system: String, createdAt: Double, leftAt: Int64, snapshotRevision: UInt64) {
        self.id = id
        self.system = system
        self.createdAt = createdAt
        self.leftAt = leftAt
        self.snapshotRevision = snapshotRevision
    }
}

/// Where a list of journaled sessions continues: after the session `id` that left memory at `time`.
public struct SessionListCursor: Sendable, Equatable {
    /// The time of the last session listed (milliseconds since 1970; 0 when unknown).
    public var time: Int64
    /// Its id.
    public var id: String

    /// Creates a cursor.
    public init(time: Int64, id: String) {
        self.time = time
        self.id = id
    }
}
