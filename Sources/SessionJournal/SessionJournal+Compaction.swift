/// What a compaction removed and whether it rewrote the file.
public struct CompactionReport: Sendable, Equatable {
    /// Events deleted because a snapshot covers them or their session is gone.
    public var deletedEvents: Int
    /// Snapshots deleted because their session is gone.
    public var deletedSnapshots: Int
    /// Whether the file was rebuilt with `VACUUM` (done when over a quarter of its pages are free).
    public var vacuumed: Bool
    /// The database file's size in bytes afterwards (page count × page size).
    public var bytes: Int64
}

/// Compaction: runs on the writer queue between two group commits, so appends wait for it.
extension SessionJournal {
    /// Deletes events covered by snapshots and rows of removed sessions (snapshots and removals already delete
    /// theirs as they are written; this catches what a salvage or an older file left), checkpoints the WAL
    /// and truncates it, and rebuilds the file with `VACUUM` when over a quarter of its pages are free.
    public func compact() throws(JournalError) -> CompactionReport {
        try withStore { store throws(JournalError) in
            let connection = store.connection
            try connection.execute("BEGIN IMMEDIATE")
            do throws(JournalError) {
                try connection.execute(JournalSchema.compactCovered)
                let covered = try connection.integer("SELECT changes()")
                try connection.execute("DELETE FROM events WHERE session NOT IN (SELECT id FROM sessions)")
                let orphanEvents = try connection.integer("SELECT changes()")
                try connection.execute("DELETE FROM snapshots WHERE session NOT IN (SELECT id FROM sessions)")
                let orphanSnapshots = try connection.integer("SELECT changes()")
                try connection.execute("COMMIT")
                let pages = try connection.integer("PRAGMA page_count")
                let free = try connection.integer("PRAGMA freelist_count")
                let vacuum = pages > 64 && free * 4 > pages
                if vacuum {
                    try connection.execute("VACUUM")
                }
                try connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
                let size =
                    try connection.integer("PRAGMA page_count") * connection.integer("PRAGMA page_size")
                return CompactionReport(
                    deletedEvents: Int(covered + orphanEvents),
                    deletedSnapshots: Int(orphanSnapshots),
                    vacuumed: vacuum,
                    bytes: size
                )
            } catch {
                try? connection.execute("ROLLBACK")
                throw error
            }
        }
    }
}
