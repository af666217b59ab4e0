/// A journaled event read back.
public struct JournalEvent: Sendable, Equatable {
    /// The revision the event produced.
    public var revision: UInt64
    /// The event as JSON text.
    public var event: String
    /// Who produced it.
    public var origin: EventOrigin
    /// Its schema version, time and the checksum of the state it produced.
    public var stamp: EventStamp

    /// Creates a journaled event.
    public init(revision: UInt64, event: String, origin: EventOrigin, stamp: EventStamp = EventStamp()) {
        self.revision = revision
        self.event = event
        self.origin = origin
        self.stamp = stamp
    }
}

/// One live session as recovery found it: where to start (the latest snapshot, or the initial state at
/// revision 0) and the events to reduce after it, in revision order without gaps.
public struct RecoveredSession: Sendable, Equatable {
    /// The creation record.
    public var creation: SessionCreation
    /// The revision of `baseState`: the latest snapshot's, or 0.
    public var baseRevision: UInt64
    /// The state to start from as JSON text: the latest snapshot, or the initial state.
    public var baseState: String
    /// The system's schema version `baseState` was written with.
    public var baseVersion: Int
    /// The events after `baseRevision`, revisions `baseRevision + 1, + 2, ...`.
    public var events: [JournalEvent]
    /// Why records after the last event were dropped (a checksum mismatch or a gap), nil when nothing was.
    /// Such a session is restored at an earlier revision than clients may have seen: give it a new epoch.
    public var damage: String?
    /// The answers to the session's keyed requests, oldest first: at most the configured number per session, and
    /// none past `revision` (whose events were lost to damage).
    public var answers: [KeyedAnswer]
    /// The session's token generation (`JournalRecord.tokens`): 0 when it was never revoked.
    public var tokenGeneration: UInt64
    /// Each client's last numbered post (`JournalRecord.sequenced`), none past `revision`.
    public var clients: [ClientSequence] = []
    /// The session's effects are paused (`JournalRecord.paused`): a fork not resumed yet.
    public var effectsPaused = false

    /// Creates a recovered session.
    public init(
        creation: SessionCreation,
        baseRevision: UInt64,
        baseState: String,
        events: [JournalEvent],
        damage: String? = nil,
        answers: [KeyedAnswer] = [],
        baseVersion: Int = 1,
        tokenGeneration: UInt64 = 0
    ) {
        self.tokenGeneration = tokenGeneration
        self.baseVersion = baseVersion
        self.creation = creation
        self.baseRevision = baseRevision
        self.baseState = baseState
        self.events = events
        self.damage = damage
        self.answers = answers
    }

    /// The revision the session reaches once every event is reduced.
    public var revision: UInt64 { events.last?.revision ?? baseRevision }
}

/// What `Journal.recover()` found.
public struct JournalRecovery: Sendable {
    /// Every live session, ordered by id.
    public var sessions: [RecoveredSession]
    /// Where a database file that failed SQLite's checks was moved before salvage; nil when none was.
    public var movedAside: String?
    /// What was detected and repaired, one line each, for the log.
    public var problems: [String]

    package init(sessions: [RecoveredSession], movedAside: String?, problems: [String]) {
        self.sessions = sessions
        self.movedAside = movedAside
        self.problems = problems
    }

    /// What `Journal.start()` found: no session read back, only counted.
    public struct Summary: Sendable, Equatable {
        /// The sessions the journal holds.
        public var sessions: Int
        /// Where a database file that failed SQLite's checks was moved before salvage; nil when none was.
        public var movedAside: String?
        /// What was detected and repaired, one line each (logged by `start()`).
        public var problems: [String]

        package init(sessions: Int, movedAside: String?, problems: [String]) {
            self.sessions = sessions
            self.movedAside = movedAside
            self.problems = problems
        }
    }
}

/// Reading a session back, the same for every journal: each record is checked against the checksum stored with it,
/// and the history ends at the first record that fails or is missing.
extension RecoveredSession {
    /// A snapshot as a journal stored it, with its checksum (nil when the stored value is unreadable).
    package struct StoredSnapshot {
        var revision: UInt64
        var state: String
        var version: Int
        var checksum: Int64?

        package init(revision: UInt64, state: String, version: Int, checksum: Int64?) {
            self.revision = revision
            self.state = state
            self.version = version
            self.checksum = checksum
        }
    }

    /// The session of `creation` (written at `generation`, its stored checksum `creationChecksum`) at its latest
    /// `snapshot`: nil, said in `problems`, when the creation fails its checksum; at revision 0 with `damage` when
    /// the snapshot does (the events it covered are gone, so the initial state is the last consistent point).
    package static func checked(
        _ creation: SessionCreation,
        generation: Int64,
        creationChecksum: Int64?,
        snapshot: StoredSnapshot?,
        problems: inout [String]
    ) -> RecoveredSession? {
        guard RecordChecksum.creation(creation, generation: generation) == creationChecksum else {
            problems.append("session \(creation.id): creation record fails its checksum; session not restored")
            return nil
        }
        var session = RecoveredSession(
            creation: creation,
            baseRevision: 0,
            baseState: creation.state,
            events: [],
            baseVersion: creation.version
        )
        guard let snapshot else { return session }
        let expected = RecordChecksum.snapshot(
            creation.id,
            snapshot.revision,
            snapshot.state,
            version: snapshot.version
        )
        if expected == snapshot.checksum {
            session.baseRevision = snapshot.revision
            session.baseState = snapshot.state
            session.baseVersion = snapshot.version
        } else {
            session.damage = "snapshot at revision \(snapshot.revision) fails its checksum; restored at revision 0"
        }
        return session
    }

    /// Sets the token generation read from the journal (`stored`, nil for no row) when its checksum holds. A row that
    /// fails it leaves the generation unknown, and the session fails closed: it is marked damaged, so it is restored
    /// under a new epoch, which ends every token minted for it. Call it after the events were followed.
    package mutating func readTokens(_ stored: (generation: UInt64, checksum: Int64?)?) {
        guard let stored else { return }
        guard RecordChecksum.tokens(creation.id, stored.generation) == stored.checksum else {
            damage =
                damage ?? "its token generation fails its checksum; restored under a new epoch, so its tokens end"
            return
        }
        tokenGeneration = stored.generation
    }

    /// Adds the event at `revision`, which `read` makes (nil when it fails its checksum), when it follows on without
    /// a gap; an event the snapshot covers is skipped, and the first missing or failing one ends the history.
    package mutating func follow(_ revision: UInt64, _ read: () -> JournalEvent?) {
        guard damage == nil, revision > baseRevision else { return }
        guard revision == self.revision + 1 else {
            damage = "event \(self.revision + 1) is missing; events from \(revision) on dropped"
            return
        }
        guard let event = read() else {
            damage = "event \(revision) fails its checksum; it and later events dropped"
            return
        }
        events.append(event)
    }
}
