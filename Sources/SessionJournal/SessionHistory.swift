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

/// A journal whose sessions' histories can be read back: what `feedback-host verify` and the export route need, and
/// nothing else of a journal, so that any journal (SQLite, another database) can serve them.
public protocol SessionHistoryReading: Sendable {
    /// The number of live sessions.
    func sessionCount() throws(JournalError) -> Int
    /// Calls `body` with every live session's history, in batches of at most `batchSize` sessions, in id order.
    func readHistories(batchSize: Int, _ body: ([SessionHistory]) -> Void) throws(JournalError)
    /// The history of one session, nil when the journal holds no such session.
    func history(of id: String) throws(JournalError) -> SessionHistory?
}
