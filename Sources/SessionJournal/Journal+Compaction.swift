import CoreMetrics

/// What a compaction removed and whether it rewrote the file.
public struct CompactionReport: Sendable, Equatable {
    /// Events deleted because a snapshot covers them or their session is gone.
    public var deletedEvents: Int
    /// Snapshots deleted because their session is gone.
    public var deletedSnapshots: Int
    /// Keyed answers deleted because their session is gone or it has newer ones beyond the configured number.
    public var deletedAnswers: Int
    /// Whether the file was rebuilt with `VACUUM` (done when over a quarter of its pages are free).
    public var vacuumed: Bool
    /// The database file's size in bytes afterwards (page count × page size).
    public var bytes: Int64

    package init(deletedEvents: Int, deletedSnapshots: Int, deletedAnswers: Int, vacuumed: Bool, bytes: Int64) {
        self.deletedEvents = deletedEvents
        self.deletedSnapshots = deletedSnapshots
        self.deletedAnswers = deletedAnswers
        self.vacuumed = vacuumed
        self.bytes = bytes
    }
}

/// Compaction: runs on the writer queue between two group commits, so appends wait for it.
extension Journal {
    /// Deletes every event covered by a snapshot or of a removed session, snapshots of removed sessions (the
    /// background compaction does the same a chunk at a time), and keyed answers of removed sessions or beyond the
    /// last `answersPerSession` of a session, checkpoints the WAL and truncates it, and rebuilds
    /// the file with `VACUUM` when over a quarter of its pages are free. Appends wait while it runs.
    public func compact() throws(JournalError) -> CompactionReport {
        try withStore { store throws(JournalError) in
            let connection = store.connection
            try connection.execute("BEGIN IMMEDIATE")
            do throws(JournalError) {
                let last = try store.lastLogSeq()
                let events = Int64(try store.compactEvents(from: 0, before: last + 1))
                try connection.execute(JournalSchema.deleteOrphanSnapshots)
                let snapshots = try connection.integer("SELECT changes()")
                try connection.execute(JournalSchema.deleteOrphanHistory)
                while try store.indexTimeline(rows: 1_000_000).covered > 0 {}
                try connection.execute(JournalSchema.compactTimeline)
                let answers = try store.compactAnswers()
                _ = try store.compactDeadlines()
                try connection.execute("COMMIT")
                let pages = try connection.integer("PRAGMA page_count")
                let free = try connection.integer("PRAGMA freelist_count")
                let vacuum = pages > 64 && free * 4 > pages
                if vacuum {
                    try connection.execute("VACUUM")
                }
                try connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
                let size = try connection.integer("PRAGMA page_count") * connection.integer("PRAGMA page_size")
                metrics.fullCompactions.increment()
                metrics.bytes.record(store.fileBytes())
                return CompactionReport(
                    deletedEvents: Int(events),
                    deletedSnapshots: Int(snapshots),
                    deletedAnswers: answers,
                    vacuumed: vacuum,
                    bytes: size
                )
            } catch {
                try? connection.execute("ROLLBACK")
                store.reloadTimelineThrough()
                throw error
            }
        }
    }
}
