/// The journal's tables and statements.
///
/// - `sessions`: one row per live session (creation record), with the `generation` it was created at: the last
///   `events.seq` handed out then. Events of the same id with a lower `seq` belong to an earlier incarnation.
/// - `events`: an append-only log. `seq` is `AUTOINCREMENT` (never reused), so every insert lands on the
///   table's last page: a group commit of N events writes a page or two, not a page per session. No secondary
///   index; recovery reads the log in `seq` order, and compaction deletes rows covered by a snapshot or whose
///   session is gone, a chunk of `seq` at a time.
/// - `snapshots`: the latest snapshot per session.
/// - `answers` (since version 3): the answers to keyed (idempotent) requests, a log indexed by session; deleted
///   with their session (and when its id is created again), trimmed to the last `answersPerSession` of each.
/// - `meta` (since version 3): the journal's own settings, such as the fingerprint key made with the file.
/// - `deadlines` (since version 4): each session's next durable-timer deadline (milliseconds since 1970), indexed by
///   time, so that the server can wake a passive session when its timer is due without reading every session.
///   Derived from the sessions' states (the recorder writes it when it changes), so it carries no checksum.
/// - `settled` (since version 4): sessions that left memory with a snapshot at their last revision and nothing
///   after it: one of them is read back by its keys alone, without a scan of the log (which has no index by session).
///   The mark is cleared (`JournalRecord.settled` with no revision) before the session appends again.
/// - `activity` (since version 5): when each session last left memory (milliseconds since 1970), indexed by time,
///   for `session.retention`: written with the settled mark, kept while the session is active again (the server
///   knows which are), removed with the session. A session the journal holds without a row (left in memory by a
///   crash, or written before version 5) gets one stamped with the time the retention sweep first runs.
///
/// Each row of `sessions`, `events`, `snapshots` and `answers` carries a CRC-32 (`RecordChecksum`) of its key,
/// number and payload.
///
/// - Version 6 adds the systems' schema versions (version 5 is main's `activity` table, issue 19): `version` on
///   `sessions`, `events` and `snapshots` (the version of the system's JSON the row was written with; 1 for every row
///   written before), and on `events` the wall time the event was recorded at (`at`, milliseconds since 1970) and the
///   checksum of the state it produced (`state_sum`, `StateChecksum` of the encoded state): NULL on older rows. It adds
///   `history`: the kept snapshots of each session (`JournalConfiguration.historySnapshots`), which compaction keeps
///   the events after, so that `verify` can replay from one kept snapshot to the next. A row's checksum covers its
///   version (and `at`, `state_sum`) only when they differ from an old row's (version 1, NULLs), so older rows keep
///   theirs.
///
/// - Version 7 adds `tokens`: each session's token generation (`JournalRecord.tokens`, `--auth jwt`'s revocations),
///   no row for generation 0, with a CRC-32 like the other rows that are not derived from a state. A creation or a
///   removal of the id deletes it; compaction deletes the rows of sessions that are gone.
///
/// - Version 8 adds `quarantine` (issue 31): the sessions the process died inside of (`Quarantine`: a reason, a time in
///   milliseconds since 1970, the host that recorded it), indexed by time. Written and deleted by calls of their own
///   (an admin's, the start's), not by appends; a creation or a removal of the id deletes it, and compaction deletes
///   the rows of sessions that are gone. No checksum: a damaged row holds a session out (or lets it in) and says why,
///   it loses nothing the session recorded.
///
/// - Version 9 adds (issue 32) `feedback` on `events` (the name of the feedback whose effect produced the event, NULL
///   for a client's event and every older row; the row's checksum covers it only when it is set), `at` on `history`
///   (when the kept snapshot was written, ms since 1970, for an age retention; NULL on older rows, which count as old),
///   and `timeline`: the per-session index of the log, `(session, rev) -> seq`, filled by the background compaction
///   step a chunk of the log at a time (never by a commit, so that a group commit still writes the log's last page and
///   no page per session), up to the log position `meta`'s `timeline.through` names. Reading one session's history is
///   an index range of `timeline` joined to the log by `seq`, plus the log's tail after `timeline.through` (the last
///   step's worth). A creation or a removal of the id deletes its rows; rows whose event compaction deleted are
///   skipped by the join and deleted by `compact()`.
/// - Version 9 also adds `clients` (issue 34): each client's last numbered post per session (`ClientSequence`:
///   the sequence, the answer's status and body, its cursor), one row per (session, client) replaced in the transaction
///   of the post's events; deleted with the session and by its re-creation, compaction deletes the rows of sessions
///   that are gone. With a CRC-32 like the other rows a client wrote.
/// - Version 9 also has (issue 32, forks) `paused`: the sessions whose effects are paused (`JournalRecord.paused`, a
///   fork until it is resumed), one row each, written in the fork's creation append and deleted by its resume, a
///   creation or a removal of the id, and by compaction for sessions that are gone. Their deadlines stay in
///   `deadlines` but the waker's queries skip them. No checksum, like `quarantine`. A version 9 file made before it
///   gets it when opened (`createPaused`, run at every open).
///
/// Versions: a file of version 2 (no `answers`, no `meta`), 3 (no `deadlines`), 4 (no `activity`), 5 (no versions, no
/// `history`), 6 (no `tokens`), 7 (no `quarantine`) or 8 (no `feedback`, no `timeline`, no `clients`) gets what it
/// lacks and becomes version 9 in one transaction when opened; a new file starts at 9 the same way. Any other version
/// is refused.
package enum JournalSchema {
    static let version: Int64 = 9
    /// The versions `JournalStore` opens: 0 is a new, empty file; 2 to 8 are migrated.
    static let readable: Set<Int64> = [0, 2, 3, 4, 5, 6, 7, 8, 9]
    /// The first version with `addVersions`' columns: a file below it gets them.
    static let versionsAdded: Int64 = 6
    /// The first version with `addFeedback`'s columns: a file below it gets them.
    static let feedbackAdded: Int64 = 9

    /// Version 9's columns (table, column, type), added to a file below it that lacks them (a new file too).
    static let feedbackColumns = [("events", "feedback", "TEXT"), ("history", "at", "INTEGER")]

    /// Version 6's columns, added to a file below it (a new file too: `create` makes the older tables).
    static let addVersions = """
        ALTER TABLE sessions ADD COLUMN version INTEGER NOT NULL DEFAULT 1;
        ALTER TABLE events ADD COLUMN version INTEGER NOT NULL DEFAULT 1;
        ALTER TABLE events ADD COLUMN at INTEGER;
        ALTER TABLE events ADD COLUMN state_sum INTEGER;
        ALTER TABLE snapshots ADD COLUMN version INTEGER NOT NULL DEFAULT 1;
        """

    /// Creates whatever table is missing (the shape before version 6, plus `history`, `tokens` and `quarantine`): run
    /// in one transaction with `addVersions` (below version 6) and the new `user_version`, it both creates and migrates.
    static let create = """
        CREATE TABLE IF NOT EXISTS sessions(
            id TEXT PRIMARY KEY, system TEXT NOT NULL, epoch INTEGER NOT NULL, state TEXT NOT NULL,
            created REAL NOT NULL, generation INTEGER NOT NULL, crc INTEGER NOT NULL) WITHOUT ROWID;
        CREATE TABLE IF NOT EXISTS events(
            seq INTEGER PRIMARY KEY AUTOINCREMENT, session TEXT NOT NULL, rev INTEGER NOT NULL,
            origin INTEGER NOT NULL, event TEXT NOT NULL, crc INTEGER NOT NULL);
        CREATE TABLE IF NOT EXISTS snapshots(
            session TEXT PRIMARY KEY, rev INTEGER NOT NULL, state TEXT NOT NULL, crc INTEGER NOT NULL) WITHOUT ROWID;
        CREATE TABLE IF NOT EXISTS answers(
            seq INTEGER PRIMARY KEY AUTOINCREMENT, session TEXT NOT NULL, key TEXT NOT NULL,
            fingerprint INTEGER NOT NULL, epoch INTEGER NOT NULL, rev INTEGER NOT NULL, state TEXT NOT NULL,
            crc INTEGER NOT NULL);
        CREATE INDEX IF NOT EXISTS answers_by_session ON answers(session, seq);
        CREATE TABLE IF NOT EXISTS meta(name TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
        CREATE TABLE IF NOT EXISTS deadlines(session TEXT PRIMARY KEY, at INTEGER NOT NULL) WITHOUT ROWID;
        CREATE TABLE IF NOT EXISTS settled(session TEXT PRIMARY KEY, rev INTEGER NOT NULL) WITHOUT ROWID;
        CREATE INDEX IF NOT EXISTS deadlines_by_time ON deadlines(at);
        CREATE TABLE IF NOT EXISTS activity(session TEXT PRIMARY KEY, at INTEGER NOT NULL) WITHOUT ROWID;
        CREATE INDEX IF NOT EXISTS activity_by_time ON activity(at);
        CREATE TABLE IF NOT EXISTS history(
            session TEXT NOT NULL, rev INTEGER NOT NULL, version INTEGER NOT NULL, state TEXT NOT NULL,
            crc INTEGER NOT NULL, PRIMARY KEY(session, rev)) WITHOUT ROWID;
        CREATE TABLE IF NOT EXISTS tokens(
            session TEXT PRIMARY KEY, generation INTEGER NOT NULL, crc INTEGER NOT NULL) WITHOUT ROWID;
        CREATE TABLE IF NOT EXISTS quarantine(
            session TEXT PRIMARY KEY, reason TEXT NOT NULL, at INTEGER NOT NULL, replica TEXT) WITHOUT ROWID;
        CREATE INDEX IF NOT EXISTS quarantine_by_time ON quarantine(at);
        CREATE TABLE IF NOT EXISTS timeline(
            session TEXT NOT NULL, rev INTEGER NOT NULL, seq INTEGER NOT NULL, PRIMARY KEY(session, rev)) WITHOUT ROWID;
        CREATE TABLE IF NOT EXISTS clients(
            session TEXT NOT NULL, client TEXT NOT NULL, seq INTEGER NOT NULL, epoch INTEGER NOT NULL,
            rev INTEGER NOT NULL, status INTEGER NOT NULL, answer TEXT NOT NULL, crc INTEGER NOT NULL,
            PRIMARY KEY(session, client)) WITHOUT ROWID;
        """ + createPaused

    /// The `paused` table (forks, issue 32), created at every open: a version 9 file made before it lacks it.
    static let createPaused = "CREATE TABLE IF NOT EXISTS paused(session TEXT PRIMARY KEY) WITHOUT ROWID;"

    /// The tables and their columns in order, for salvage (copied verbatim, checked later by recovery).
    /// A damaged file of an older version has fewer columns: its rows fill the first ones, the rest take defaults.
    static let tables: [(name: String, columns: [String], key: String)] = [
        ("sessions", ["id", "system", "epoch", "state", "created", "generation", "crc", "version"], "id"),
        (
            "events", ["seq", "session", "rev", "origin", "event", "crc", "version", "at", "state_sum", "feedback"],
            "seq"
        ),
        ("snapshots", ["session", "rev", "state", "crc", "version"], "session"),
        ("answers", ["seq", "session", "key", "fingerprint", "epoch", "rev", "state", "crc"], "seq"),
        ("meta", ["name", "value"], "name"),
        ("deadlines", ["session", "at"], "session"),
        ("settled", ["session", "rev"], "session"),
        ("history", ["session", "rev", "version", "state", "crc", "at"], "session,rev"),
        ("timeline", ["session", "rev", "seq"], "session,rev"),
        ("activity", ["session", "at"], "session"),
        ("tokens", ["session", "generation", "crc"], "session"),
        ("quarantine", ["session", "reason", "at", "replica"], "session"),
        ("paused", ["session"], "session"),
        ("clients", ["session", "client", "seq", "epoch", "rev", "status", "answer", "crc"], "session,client"),
    ]

    static let upsertClient = "INSERT OR REPLACE INTO clients VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)"
    static let deleteClients = "DELETE FROM clients WHERE session = ?1"
    static let deleteClient = "DELETE FROM clients WHERE session = ?1 AND client = ?2"
    /// One session's (?1) clients: session, client, seq, epoch, rev, status, answer, crc.
    static let readSessionClients =
        "SELECT session, client, seq, epoch, rev, status, answer, crc FROM clients WHERE session = ?1"
    /// Every client row, by session.
    static let readClients =
        "SELECT session, client, seq, epoch, rev, status, answer, crc FROM clients ORDER BY session, client"

    static let insertSession = "INSERT OR REPLACE INTO sessions VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)"
    static let upsertSnapshot = "INSERT OR REPLACE INTO snapshots VALUES(?1, ?2, ?3, ?4, ?5)"
    /// A kept snapshot (`history`), and the trim that keeps the newest ?2 of session ?1 (?2 > 0).
    static let upsertHistory =
        "INSERT OR REPLACE INTO history(session, rev, version, state, crc, at) VALUES(?1, ?2, ?3, ?4, ?5, ?6)"
    static let trimHistory = """
        DELETE FROM history WHERE session = ?1
            AND rev <= (SELECT rev FROM history WHERE session = ?1 ORDER BY rev DESC LIMIT 1 OFFSET ?2)
        """
    /// Retention by events: deletes session ?1's kept snapshots older than the newest one at or before revision ?2.
    static let trimHistoryBefore = """
        DELETE FROM history WHERE session = ?1
            AND rev < (SELECT max(rev) FROM history WHERE session = ?1 AND rev <= ?2)
        """
    /// Retention by age: deletes session ?1's kept snapshots older than the newest one written at or before ?2 (ms).
    static let trimHistoryOlder = """
        DELETE FROM history WHERE session = ?1
            AND rev < (SELECT max(rev) FROM history WHERE session = ?1 AND coalesce(at, 0) <= ?2)
        """
    static let deleteHistory = "DELETE FROM history WHERE session = ?1"
    static let deleteTimeline = "DELETE FROM timeline WHERE session = ?1"
    /// Session ?1's index rows at or before revision ?2: the events compaction deletes (`compactRange`), those its
    /// oldest kept snapshot covers, and whose state that snapshot gives.
    static let trimTimeline = "DELETE FROM timeline WHERE session = ?1 AND rev <= ?2"
    /// The indexed events of session ?1 at or before revision ?2, found through the index (rowid lookups).
    static let deleteIndexedEvents = """
        DELETE FROM events WHERE seq IN (SELECT seq FROM timeline WHERE session = ?1 AND rev <= ?2)
        """
    static let oldestKept = "SELECT min(rev) FROM history WHERE session = ?1"
    static let systemOf = "SELECT system FROM sessions WHERE id = ?1"
    static let timelineThroughName = "timeline.through"
    static let writeTimelineThrough = "INSERT OR REPLACE INTO meta(name, value) VALUES('timeline.through', ?1)"
    /// Indexes the log's events with `seq` in (?1, ?2] of the sessions' current incarnations.
    static let indexTimeline = """
        INSERT OR REPLACE INTO timeline(session, rev, seq)
            SELECT e.session, e.rev, e.seq FROM events e JOIN sessions s ON s.id = e.session AND e.seq > s.generation
            WHERE e.seq > ?1 AND e.seq <= ?2
        """
    /// Timeline rows whose event is gone (compacted) or whose session is gone.
    static let compactTimeline = """
        DELETE FROM timeline WHERE NOT EXISTS (SELECT 1 FROM events e WHERE e.seq = timeline.seq)
            OR session NOT IN (SELECT id FROM sessions)
        """
    static let deleteSnapshot = "DELETE FROM snapshots WHERE session = ?1"
    static let deleteSession = "DELETE FROM sessions WHERE id = ?1"
    static let lastSeq = "SELECT coalesce((SELECT seq FROM sqlite_sequence WHERE name = 'events'), 0)"

    static let insertAnswer = """
        INSERT INTO answers(session, key, fingerprint, epoch, rev, state, crc) VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7)
        """
    static let deleteAnswers = "DELETE FROM answers WHERE session = ?1"
    /// Keeps the last ?2 answers of session ?1 (?2 > 0).
    static let trimAnswers = """
        DELETE FROM answers WHERE session = ?1
            AND seq <= (SELECT seq FROM answers WHERE session = ?1 ORDER BY seq DESC LIMIT 1 OFFSET ?2)
        """
    /// Keeps the last ?1 answers of every live session and none of any other.
    static let compactAnswers = """
        DELETE FROM answers WHERE session NOT IN (SELECT id FROM sessions) OR seq IN (
            SELECT seq FROM (
                SELECT seq, row_number() OVER (PARTITION BY session ORDER BY seq DESC) AS newer FROM answers)
            WHERE newer > ?1)
        """
    static let readAnswers = "SELECT session, key, fingerprint, epoch, rev, state, crc FROM answers ORDER BY seq"

    static let upsertDeadline = "INSERT OR REPLACE INTO deadlines(session, at) VALUES(?1, ?2)"
    static let deleteDeadline = "DELETE FROM deadlines WHERE session = ?1"
    /// The sessions whose deadline is at or before ?1, earliest first, at most ?2.
    /// A paused session's deadline (a fork's) wakes nothing until it is resumed.
    static let dueDeadlines = """
        SELECT session, at FROM deadlines d WHERE at <= ?1
            AND NOT EXISTS (SELECT 1 FROM paused p WHERE p.session = d.session) ORDER BY at LIMIT ?2
        """
    /// The deadlines after ?1 of sessions not paused, earliest first, at most ?2.
    static let upcomingDeadlines = """
        SELECT session, at FROM deadlines d WHERE at > ?1
            AND NOT EXISTS (SELECT 1 FROM paused p WHERE p.session = d.session) ORDER BY at LIMIT ?2
        """
    static let countDeadlines = "SELECT count(*) FROM deadlines"
    static let upsertSettled = "INSERT OR REPLACE INTO settled(session, rev) VALUES(?1, ?2)"
    static let deleteSettled = "DELETE FROM settled WHERE session = ?1"
    static let readSettled = "SELECT rev FROM settled WHERE session = ?1"
    static let upsertActivity = "INSERT OR REPLACE INTO activity(session, at) VALUES(?1, ?2)"
    static let deleteActivity = "DELETE FROM activity WHERE session = ?1"
    static let touchActivity = "UPDATE activity SET at = ?2 WHERE session = ?1"
    /// Whether session ?1 left memory before ?2 and has no deadline pending (retention's check at deletion).
    static let isAbandoned = """
        SELECT 1 FROM activity a WHERE a.session = ?1 AND a.at < ?2
            AND NOT EXISTS (SELECT 1 FROM deadlines d WHERE d.session = ?1)
        """
    /// Gives every session without an activity row one at ?1.
    static let stampActivity = "INSERT OR IGNORE INTO activity(session, at) SELECT id, ?1 FROM sessions"
    /// Sessions that last left memory before ?1 and have no pending durable-timer deadline (a timer still to come
    /// is activity to come), oldest first, at most ?2.
    static let abandonedSessions = """
        SELECT a.session FROM activity a
        WHERE a.at < ?1 AND NOT EXISTS (SELECT 1 FROM deadlines d WHERE d.session = a.session)
        ORDER BY a.at LIMIT ?2
        """
    /// Deadlines of sessions the journal no longer holds (compaction).
    static let compactDeadlines = """
        DELETE FROM deadlines WHERE session NOT IN (SELECT id FROM sessions);
        DELETE FROM settled WHERE session NOT IN (SELECT id FROM sessions);
        DELETE FROM activity WHERE session NOT IN (SELECT id FROM sessions);
        DELETE FROM tokens WHERE session NOT IN (SELECT id FROM sessions);
        DELETE FROM quarantine WHERE session NOT IN (SELECT id FROM sessions);
        DELETE FROM clients WHERE session NOT IN (SELECT id FROM sessions);
        DELETE FROM paused WHERE session NOT IN (SELECT id FROM sessions);
        """

    static let insertPaused = "INSERT OR REPLACE INTO paused(session) VALUES(?1)"
    static let deletePaused = "DELETE FROM paused WHERE session = ?1"
    /// Whether session ?1's effects are paused.
    static let readPaused = "SELECT 1 FROM paused WHERE session = ?1"

    static let upsertTokens = "INSERT OR REPLACE INTO tokens(session, generation, crc) VALUES(?1, ?2, ?3)"
    static let deleteTokens = "DELETE FROM tokens WHERE session = ?1"
    /// Raises session ?1's token generation to ?2 (checksum ?3) when the journal holds the session and its generation
    /// is lower (the adoption of an older version's revocations file).
    static let raiseTokens = """
        INSERT OR REPLACE INTO tokens(session, generation, crc) SELECT ?1, ?2, ?3
        WHERE EXISTS (SELECT 1 FROM sessions WHERE id = ?1)
            AND NOT EXISTS (SELECT 1 FROM tokens WHERE session = ?1 AND generation >= ?2)
        """
    /// One session's (?1) token generation and its checksum.
    static let readTokens = "SELECT generation, crc FROM tokens WHERE session = ?1"

    static let upsertQuarantine =
        "INSERT OR REPLACE INTO quarantine(session, reason, at, replica) VALUES(?1, ?2, ?3, ?4)"
    static let deleteQuarantine = "DELETE FROM quarantine WHERE session = ?1"
    /// One session's (?1) quarantine.
    static let readQuarantine = "SELECT session, reason, at, replica FROM quarantine WHERE session = ?1"
    /// The quarantined sessions, oldest first, at most ?1.
    static let listQuarantine = "SELECT session, reason, at, replica FROM quarantine ORDER BY at, session LIMIT ?1"

    static let fingerprintKeyName = "fingerprint.key"
    /// Set in `meta` once the file's keyed answers written before fingerprints were HMAC-SHA256 are marked unknown.
    package static let fingerprintSchemeName = "fingerprint.scheme"
    package static let fingerprintScheme = "hmac-sha256"
    static let readMeta = "SELECT value FROM meta WHERE name = ?1"
    static let insertMetaIfMissing = "INSERT OR IGNORE INTO meta(name, value) VALUES(?1, ?2)"

    static let readSessions = """
        SELECT s.id, s.system, s.epoch, s.state, s.created, s.generation, s.crc, n.rev, n.state, n.crc, s.version,
            n.version
        FROM sessions s LEFT JOIN snapshots n ON n.session = s.id ORDER BY s.id
        """
    static let readEvents = """
        SELECT session, rev, origin, event, crc, seq, version, at, state_sum, feedback FROM events ORDER BY seq
        """
    /// One session, by id (?1): the columns of `readSessions`.
    static let readSession = """
        SELECT s.id, s.system, s.epoch, s.state, s.created, s.generation, s.crc, n.rev, n.state, n.crc, s.version,
            n.version
        FROM sessions s LEFT JOIN snapshots n ON n.session = s.id WHERE s.id = ?1
        """
    /// One session's events (?1) after `seq` ?2 (its generation). The log has no index by session (an index costs a
    /// quarter of the posted events/s under `per-commit`: every commit then dirties a page per session), so this
    /// scans the log once.
    static let readSessionEvents = """
        SELECT session, rev, origin, event, crc, seq, version, at, state_sum, feedback FROM events
        WHERE session = ?1 AND seq > ?2 ORDER BY seq
        """
    /// One session's keyed answers (?1), through `answers_by_session`: the columns of `readAnswers`.
    static let readSessionAnswers = """
        SELECT session, key, fingerprint, epoch, rev, state, crc FROM answers WHERE session = ?1 ORDER BY seq
        """

    /// Deletes the events with `seq` in [?1, ?2) that neither recovery nor verification needs: covered by their
    /// session's oldest kept snapshot (its latest when it keeps no history), or of a session that is gone (or of an
    /// earlier incarnation of its id): `CompactionCutoffs`, registered on the writer's connection, reads each session's
    /// cutoff once a run (its `reset()` before each).
    static let compactRange = """
        DELETE FROM events WHERE seq >= ?1 AND seq < ?2 AND \(CompactionCutoffs.functionName)(session, rev, seq)
        """
    /// Where a compaction step from ?1 ends: the position of the row after the first ?3 rows of the log at or past ?1
    /// and at or before ?2 (none: the step runs to ?2).
    static let compactionStepEnd = "SELECT seq FROM events WHERE seq >= ?1 AND seq <= ?2 ORDER BY seq LIMIT 1 OFFSET ?3"
    static let deleteOrphanSnapshots = "DELETE FROM snapshots WHERE session NOT IN (SELECT id FROM sessions)"
    static let deleteOrphanHistory = "DELETE FROM history WHERE session NOT IN (SELECT id FROM sessions)"

    /// Every live session's events of its current incarnation, by session then log order: what `verify` replays.
    /// The log has no index by session, so SQLite sorts (in temporary files past its cache).
    static let readHistoryEvents = """
        SELECT e.session, e.rev, e.origin, e.event, e.crc, e.seq, e.version, e.at, e.state_sum, e.feedback
        FROM events e JOIN sessions s ON s.id = e.session AND e.seq > s.generation ORDER BY e.session, e.seq
        """
    /// Every kept snapshot of every session, by session then revision.
    static let readHistorySnapshots = "SELECT session, rev, version, state, crc FROM history ORDER BY session, rev"
    /// One session's (?1) kept snapshots and events: the columns of `readHistorySnapshots` and `readHistoryEvents`.
    static let readSessionHistorySnapshots =
        "SELECT session, rev, version, state, crc FROM history WHERE session = ?1 ORDER BY rev"
    /// One session's (?1) indexed events with revisions in (?2, ?3], in revision order: `timeline` joined to the log.
    static let readTimelineEvents = """
        SELECT e.session, e.rev, e.origin, e.event, e.crc, e.seq, e.version, e.at, e.state_sum, e.feedback
        FROM timeline t JOIN events e ON e.seq = t.seq
        WHERE t.session = ?1 AND t.rev > ?2 AND t.rev <= ?3 ORDER BY t.rev
        """
    /// One session's (?1) events after the indexed part of the log (`seq` > ?4, the index's end, and > ?5, the
    /// session's generation) with revisions in (?2, ?3]: a scan of the log's tail only.
    static let readTailEvents = """
        SELECT session, rev, origin, event, crc, seq, version, at, state_sum, feedback FROM events
        WHERE seq > ?4 AND seq > ?5 AND session = ?1 AND rev > ?2 AND rev <= ?3 ORDER BY seq
        """
    /// The newest of session ?1's kept snapshots at or before revision ?2.
    static let readNearestHistory = """
        SELECT session, rev, version, state, crc FROM history WHERE session = ?1 AND rev <= ?2 ORDER BY rev DESC LIMIT 1
        """
    /// The oldest of session ?1's kept snapshots (NULL: none).
    static let readOldestHistory = "SELECT min(rev) FROM history WHERE session = ?1"
    /// Session ?1's kept snapshots with revisions in (?2, ?3], for the replay's checks.
    static let readHistoryBetween = """
        SELECT session, rev, version, state, crc FROM history WHERE session = ?1 AND rev > ?2 AND rev <= ?3 ORDER BY rev
        """
    /// The newest revision indexed of session ?1 (NULL: none).
    static let readTimelineHead = "SELECT max(rev) FROM timeline WHERE session = ?1"
    /// Sessions by the time they last left memory (0 when unknown), newest first, after the cursor (?1 time, ?2 id) in
    /// that order, of system ?3 (NULL: any), at most ?4; with their system, creation time and latest snapshot revision.
    static let listSessions = """
        SELECT s.id, s.system, s.created, coalesce(a.at, 0), coalesce(n.rev, 0) FROM sessions s
        LEFT JOIN activity a ON a.session = s.id LEFT JOIN snapshots n ON n.session = s.id
        WHERE (?3 IS NULL OR s.system = ?3) AND (coalesce(a.at, 0) < ?1 OR (coalesce(a.at, 0) = ?1 AND s.id > ?2))
        ORDER BY coalesce(a.at, 0) DESC, s.id LIMIT ?4
        """
    /// The sessions the journal holds, counted by system.
    static let countSessionsBySystem = "SELECT system, count(*) FROM sessions GROUP BY system ORDER BY system"
    /// Sessions and their creation records by id, with the latest snapshot: the columns of `readSessions`.
    static let readHistorySessions = readSessions
}
