/// The journal's tables and statements.
///
/// - `sessions`: one row per live session (creation record).
/// - `events`: the events after the session's latest snapshot, keyed by (session, rev).
/// - `snapshots`: the latest snapshot per session.
///
/// Each row carries a CRC-32 (`RecordChecksum`) of its key, number and payload. Tables are `WITHOUT ROWID`
/// so that rows are stored in key order: recovery reads each table in one ordered scan.
enum JournalSchema {
    static let version = 1

    static let create = """
        CREATE TABLE IF NOT EXISTS sessions(
            id TEXT PRIMARY KEY, system TEXT NOT NULL, epoch INTEGER NOT NULL, state TEXT NOT NULL,
            created REAL NOT NULL, crc INTEGER NOT NULL) WITHOUT ROWID;
        CREATE TABLE IF NOT EXISTS events(
            session TEXT NOT NULL, rev INTEGER NOT NULL, origin INTEGER NOT NULL, event TEXT NOT NULL,
            crc INTEGER NOT NULL, PRIMARY KEY(session, rev)) WITHOUT ROWID;
        CREATE TABLE IF NOT EXISTS snapshots(
            session TEXT PRIMARY KEY, rev INTEGER NOT NULL, state TEXT NOT NULL, crc INTEGER NOT NULL) WITHOUT ROWID;
        PRAGMA user_version = \(version);
        """

    /// The tables and their columns in order, for salvage (copied verbatim, checked later by recovery).
    static let tables: [(name: String, columns: Int32, key: String)] = [
        ("sessions", 6, "id"),
        ("events", 5, "session, rev"),
        ("snapshots", 4, "session"),
    ]

    static let insertSession = "INSERT OR REPLACE INTO sessions VALUES(?1, ?2, ?3, ?4, ?5, ?6)"
    static let insertEvent = "INSERT OR REPLACE INTO events VALUES(?1, ?2, ?3, ?4, ?5)"
    static let upsertSnapshot = "INSERT OR REPLACE INTO snapshots VALUES(?1, ?2, ?3, ?4)"
    static let deleteEventsThrough = "DELETE FROM events WHERE session = ?1 AND rev <= ?2"
    static let deleteEvents = "DELETE FROM events WHERE session = ?1"
    static let deleteSnapshot = "DELETE FROM snapshots WHERE session = ?1"
    static let deleteSession = "DELETE FROM sessions WHERE id = ?1"

    static let readSessions = """
        SELECT s.id, s.system, s.epoch, s.state, s.created, s.crc, n.rev, n.state, n.crc
        FROM sessions s LEFT JOIN snapshots n ON n.session = s.id ORDER BY s.id
        """
    static let readEvents = "SELECT session, rev, origin, event, crc FROM events ORDER BY session, rev"

    static let compactCovered = """
        DELETE FROM events WHERE rev <= (SELECT n.rev FROM snapshots n WHERE n.session = events.session)
        """
}
