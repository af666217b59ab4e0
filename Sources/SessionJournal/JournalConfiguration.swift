/// How a `Journal` writes and checks its file.
public struct JournalConfiguration: Sendable, Equatable {
    /// When writes are forced to stable storage.
    public var fsync: FsyncPolicy
    /// WAL pages after which a commit checkpoints the WAL into the database file (SQLite's
    /// `wal_autocheckpoint`; 0 turns automatic checkpoints off, which only tests want).
    public var autoCheckpointPages: Int
    /// Runs `PRAGMA quick_check` when opening (a few hundred ms on a large journal); a failure moves the file
    /// aside and salvages what still reads.
    public var checkOnOpen: Bool
    /// The database file's name inside the data directory.
    public var fileName: String
    /// Background compaction: every this many milliseconds (0: never), between group commits, the next
    /// `compactionRows` of the event log are scanned and the events no recovery needs are deleted.
    public var compactionIntervalMilliseconds: Int
    /// How many rows of the event log one background compaction step scans.
    public var compactionRows: Int
    /// SQLite: how many rows of the event log the background step of each compaction tick adds to the `timeline`
    /// index (issue 32). 0 adds none in the background (a history read then scans the unindexed tail of the log, and
    /// `compact()` still indexes everything): a way to measure what the index costs the posts.
    public var timelineRows = 2_500
    /// How many steps of `timelineRows` the index may lag the log before ticks run between group commits as well
    /// as on the timer, until it is back within that bound or a step finds its rows mostly not covered yet (0: the
    /// timer's ticks only, and under a sustained load faster than they take rows in, the log grows until the load
    /// drops).
    public var catchUpSteps = 16
    /// Keyed answers (`JournalRecord.answered`) kept per session: the newest this many. Match the service's
    /// idempotency ledger, which remembers as many keys per session.
    public var answersPerSession: Int
    /// The group commit's gathering window, in microseconds (0: none). When the commit just made carried appends
    /// from at least `commitDelaySiblings` writers, the next one waits this long for more to join it, so that
    /// many concurrent writers share each sync (PostgreSQL's `commit_delay`), or until as many appends wait as the
    /// largest of the last four commits carried. A lone writer never waits: its commit starts at once.
    public var commitDelayMicroseconds: Int
    /// Appends a commit must have carried for the next one to wait `commitDelayMicroseconds`.
    public var commitDelaySiblings: Int
    /// While the journal cannot commit, a test write is tried every this many milliseconds; the first that
    /// succeeds makes the journal healthy again.
    public var probeIntervalMilliseconds: Int
    /// Snapshots kept per session for verification (`history`), the newest first, with the events between them; the
    /// creation's state counts as the first. 0 keeps none: compaction then deletes every event the latest snapshot
    /// covers. 2 keeps the previous snapshot and the events from it to the latest.
    public var historySnapshots: Int = 0
    /// How much history is kept per session (issue 32), when set: it replaces `historySnapshots`.
    public var retention: HistoryRetention?
    /// Retention per system (by name), before `retention`: what a system declares, or the configuration's.
    public var systemRetention: [String: HistoryRetention] = [:]
    /// PostgreSQL only: how long one transaction (a group commit, a read, a test write) may wait for the server's
    /// answer before its connection counts as broken (the server stopped, or the network dropped the connection
    /// without a reset): the transaction fails, the journal is failing, and its test writes connect again.
    public var answerTimeoutMilliseconds: Int = 10_000
    /// The SQLite VFS the journal's files are opened through, by registered name; nil for SQLite's default. Only
    /// tests set it (to a VFS that injects faults): no configuration key reaches it.
    public var vfs: String?

    /// Creates a configuration; the defaults are per-commit durability and SQLite's usual checkpoint size.
    public init(
        fsync: FsyncPolicy = .perCommit,
        autoCheckpointPages: Int = 1000,
        checkOnOpen: Bool = true,
        fileName: String = "journal.sqlite",
        compactionIntervalMilliseconds: Int = 125,
        compactionRows: Int = 2_500,
        answersPerSession: Int = 256,
        commitDelayMicroseconds: Int = 500,
        commitDelaySiblings: Int = 4,
        probeIntervalMilliseconds: Int = 250,
        vfs: String? = nil
    ) {
        self.probeIntervalMilliseconds = probeIntervalMilliseconds
        self.vfs = vfs
        self.answersPerSession = answersPerSession
        self.commitDelayMicroseconds = commitDelayMicroseconds
        self.commitDelaySiblings = commitDelaySiblings
        self.compactionIntervalMilliseconds = compactionIntervalMilliseconds
        self.compactionRows = compactionRows
        self.fsync = fsync
        self.autoCheckpointPages = autoCheckpointPages
        self.checkOnOpen = checkOnOpen
        self.fileName = fileName
    }

    /// The retention of the sessions of `system` (nil: the default's).
    public func retention(of system: String?) -> HistoryRetention {
        if let system, let declared = systemRetention[system] { return declared }
        return retention ?? .snapshots(max(historySnapshots, 0))
    }

    /// This configuration with `retention` and `systemRetention` set.
    public func keepingHistory(_ retention: HistoryRetention?, systems: [String: HistoryRetention]) -> Self {
        var copy = self
        copy.retention = retention
        copy.systemRetention = systems
        return copy
    }

    /// This configuration with `timelineRows` set to `rows` (at least 0).
    public func indexingTimeline(_ rows: Int) -> JournalConfiguration {
        var copy = self
        copy.timelineRows = max(rows, 0)
        return copy
    }

    /// This configuration with `historySnapshots` set to `snapshots`.
    public func keepingHistory(_ snapshots: Int) -> JournalConfiguration {
        var copy = self
        copy.historySnapshots = max(snapshots, 0)
        return copy
    }
}
