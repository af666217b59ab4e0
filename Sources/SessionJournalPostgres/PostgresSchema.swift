import SessionJournal

/// The PostgreSQL journal's tables, functions and prepared statements.
///
/// The tables and functions are `Schema/schema.sql`, embedded in the binary at build time by the `EmbedFiles` plugin so
/// that the SQL stays a file psql runs; the schema version and the prepared statements are here.
///
/// - `fh_sessions`: one row per live session (its creation record and checksum), with its owner: `owner` is the
///   token of the replica that holds it in memory (NULL when none does: passivated, or never activated), `fence` counts
///   the takeovers. Reading a session back sets a new owner under the row's lock, in the transaction that reads it.
/// - `fh_events`: the log, keyed by (session, rev). A snapshot deletes the events it covers in its own transaction, so
///   reading a session back is one index range.
/// - `fh_replicas`: each replica's lease, renewed while it runs (`seen`). A session whose `holder` has not renewed its
///   lease for `leaseMilliseconds` counts as held by nobody when timers are due: a replica that died (SIGKILL) or
///   stalls (SIGSTOP) leaves its sessions' timers to the others, and fencing refuses whatever it writes on waking.
/// - `left_at` on `fh_sessions`: when the session last left memory (milliseconds since 1970; set by a release,
///   cleared by a re-creation, stamped for rows without one), for `session.retention`: `fh_retire` deletes a session
///   only while no live replica holds it, it left before the cutoff and no deadline is pending, under the row's lock,
///   so a replica taking it at the same moment either wins (and the session stays) or finds it gone (404).
/// - `fh_history`: the kept snapshots of each session (its history retention, `JournalConfiguration.retention(of:)`;
///   the creation's state as revision 0 among them), with the time each was written (`at`), kept for the inspection
///   routes, `feedback-host verify` and the export route; a snapshot then deletes only the events up to the oldest
///   kept one, so the events between kept snapshots stay (as the SQLite journal's `history`).
/// - `fh_snapshots`, `fh_answers` (keyed answers, the newest `answersPerSession` of each session), `fh_deadlines`
///   (indexed by time), `fh_meta` (the fingerprint key, the schema version).
/// - `fh_tokens`: each session's token generation (`JournalRecord.tokens`, `--auth jwt`'s revocations; no row for 0),
///   with its checksum. Written by the owner through `fh_tokens` (fenced like every record), read in the transaction
///   that takes the session, deleted with the session and by its re-creation (`fh_forget`).
/// - `fh_quarantine` (issue 31): the sessions the process died inside of (`Quarantine`), written by whichever replica
///   found it (`fh_quarantine`, not fenced: the replica that crashed owned the session), which also lets the session go
///   so that a replica holding it is fenced and reads it back; deleted by a release, with the session and by its
///   re-creation (`fh_forget`). Added to a running database by `CREATE TABLE IF NOT EXISTS`, at schema version 1.
/// - `fh_clients` (issue 34): each client's last numbered post per session (`ClientSequence`), replaced by `fh_client`
///   (fenced) in the transaction of the post's events, read in the transaction that takes the session, deleted with
///   the session and by its re-creation (`fh_forget`), and one client's by `fh_forget_client` (fenced) when the
///   session forgets it (`session.clients.max`). Added by `CREATE TABLE IF NOT EXISTS` as well.
///
/// Every write of a session goes through a function that first checks, with `FOR SHARE` on the session's row, that
/// the caller's token is the owner, and writes nothing (returns false) when it is not: the share lock is held until
/// the commit, so a takeover (an `UPDATE` of the row) waits for every append that passed the check, and an append
/// checked after a takeover sees the new owner. Creation (`fh_create`) takes the row whoever owned it.
enum PostgresSchema {
    /// Version 2 (issue 32) adds `fh_events.feedback`, `fh_history.at` and the functions that write them. Version 3
    /// (issue 32's forks) adds `fh_paused` and the functions that read and write it: a build that does not know it
    /// would run a paused fork's effects, so it must not open such a database. An older database gets what is
    /// missing when opened (`schema.sql` adds it) and is marked this version.
    static let version = "3"

    /// Creates what is missing (`Schema/schema.sql`, under an advisory lock so that replicas starting together do not
    /// race), records the schema version when there is none or moves an older one on, and refuses a newer one, in one
    /// transaction: a build older than the database's schema raises before the commit, so the functions a newer
    /// build wrote are not replaced by its own (a multi-statement query is one transaction, and the error rolls all
    /// of it back). Builds before version 3 compared the version only after this transaction had committed.
    static let create =
        embedded("schema.sql")
        + "\nINSERT INTO fh_meta VALUES('schema.version', '\(version)') ON CONFLICT (name) DO UPDATE "
        + "SET value = EXCLUDED.value WHERE fh_meta.value IN ('1', '2');"
        + "\nDO $$ DECLARE found text := (SELECT value FROM fh_meta WHERE name = 'schema.version'); BEGIN "
        + "IF found IS DISTINCT FROM '\(version)' THEN RAISE EXCEPTION 'the database holds journal schema version %; "
        + "this build reads version \(version) (a newer build wrote it: upgrade this replica)', found; END IF; END $$;"

    /// The prepared statements by name: the record writers return whether the caller owned the session.
    static let statements: [(name: String, sql: String)] = [
        ("create", "SELECT fh_create($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)"),
        ("event", "SELECT fh_event($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)"),
        ("events", "SELECT fh_events($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)"),
        ("snapshot", "SELECT fh_snapshot($1, $2, $3, $4, $5, $6, $7, $8, $9)"),
        ("answer", "SELECT fh_answer($1, $2, $3, $4, $5, $6, $7, $8, $9)"),
        ("deadline", "SELECT fh_deadline($1, $2, $3)"),
        ("client", "SELECT fh_client($1, $2, $3, $4, $5, $6, $7, $8, $9)"),
        ("client.forget", "SELECT fh_forget_client($1, $2, $3)"),
        (
            "read.clients",
            "SELECT session, client, seq, epoch, rev, status, answer, crc FROM fh_clients WHERE session = $1"
        ),
        ("compact.clients", "DELETE FROM fh_clients WHERE session NOT IN (SELECT id FROM fh_sessions)"),
        ("tokens", "SELECT fh_tokens($1, $2, $3, $4)"),
        ("pause", "SELECT fh_pause($1, $2, $3)"),
        ("read.paused", "SELECT 1 FROM fh_paused WHERE session = $1"),
        ("compact.paused", "DELETE FROM fh_paused WHERE session NOT IN (SELECT id FROM fh_sessions)"),
        ("tokens.adopt", "SELECT fh_adopt_tokens($1, $2, $3)"),
        ("owns", "SELECT fh_owns($1, $2)"),
        // A read's look at ownership: no row lock, so the transaction takes no id and its commit waits for no WAL
        // flush (a read checks a moment, unlike a write, which the lock of `fh_owns` orders against a takeover).
        ("owner.check", "SELECT EXISTS (SELECT 1 FROM fh_sessions WHERE id = $1 AND owner = $2)"),
        ("release", "SELECT fh_release($1, $2)"),
        ("remove", "SELECT fh_remove($1, $2)"),
        // Reading one session back, in the transaction that takes it: the row's lock waits for the appends of its
        // previous owner that passed their check, and the reads after it see them.
        (
            "take",
            "UPDATE fh_sessions SET owner = $2, holder = $3, fence = fence + 1 WHERE id = $1 "
                + "RETURNING id, system, epoch, state, created, crc, version"
        ),
        ("read.snapshot", "SELECT rev, state, crc, version FROM fh_snapshots WHERE session = $1"),
        ("read.tokens", "SELECT generation, crc FROM fh_tokens WHERE session = $1"),
        // Reading a session for verification or export: no ownership taken.
        ("peek", "SELECT id, system, epoch, state, created, crc, version FROM fh_sessions WHERE id = $1"),
        ("read.history", "SELECT rev, version, state, crc FROM fh_history WHERE session = $1 ORDER BY rev"),
        // From the session's cut on (every event up to it is deleted): the index range then skips the entries of the
        // events that snapshots deleted and no vacuum has removed yet, which a busy session has thousands of (a read
        // from the session's first entry took 10 ms for one with 4,000, which a takeover of busy sessions pays each).
        (
            "read.events",
            "SELECT rev, origin, event, crc, version, at, state_sum, feedback FROM fh_events WHERE session = $1 AND rev > "
                + "coalesce((SELECT cut FROM fh_snapshots WHERE session = $1), -9223372036854775808) ORDER BY rev"
        ),
        (
            "read.answers",
            "SELECT session, key, fingerprint, epoch, rev, state, crc FROM fh_answers WHERE session = $1 ORDER BY seq"
        ),
        // Part of one session's history (issue 32): its events with revisions in ($2, $3], the newest kept snapshot at
        // or before $2, the kept ones in ($2, $3], the oldest kept revision, and the newest revision.
        (
            "read.events.range",
            "SELECT rev, origin, event, crc, version, at, state_sum, feedback FROM fh_events WHERE session = $1 "
                + "AND rev > $2 AND rev <= $3 ORDER BY rev"
        ),
        (
            "read.history.near",
            "SELECT rev, version, state, crc FROM fh_history WHERE session = $1 AND rev <= $2 ORDER BY rev DESC LIMIT 1"
        ),
        (
            "read.history.between",
            "SELECT rev, version, state, crc FROM fh_history WHERE session = $1 AND rev > $2 AND rev <= $3 ORDER BY rev"
        ),
        ("read.history.oldest", "SELECT min(rev) FROM fh_history WHERE session = $1"),
        ("read.head", "SELECT max(rev) FROM fh_events WHERE session = $1"),
        (
            "list",
            "SELECT s.id, s.system, s.created, coalesce(s.left_at, 0), coalesce(n.rev, 0) FROM fh_sessions s "
                + "LEFT JOIN fh_snapshots n ON n.session = s.id WHERE ($3::text IS NULL OR s.system = $3) "
                + "AND (coalesce(s.left_at, 0) < $1 OR (coalesce(s.left_at, 0) = $1 AND s.id > $2)) "
                + "ORDER BY coalesce(s.left_at, 0) DESC, s.id LIMIT $4"
        ),
        ("counts", "SELECT system, count(*) FROM fh_sessions GROUP BY system ORDER BY system"),
        ("ids", "SELECT id FROM fh_sessions ORDER BY id"),
        ("count", "SELECT count(*) FROM fh_sessions"),
        (
            "due",
            "SELECT d.session, d.at FROM fh_deadlines d JOIN fh_sessions s ON s.id = d.session "
                + "WHERE d.at <= $1 AND fh_unheld(s.owner, s.holder, $3) "
                + "AND NOT EXISTS (SELECT 1 FROM fh_paused p WHERE p.session = d.session) ORDER BY d.at LIMIT $2"
        ),
        // The waker's next look, among the sessions `due` would answer (no live replica holds them): a held session's
        // timer fires in its holder's memory, and counting its deadlines here had every replica's waker query the
        // database at each of them (about 800 times a second with 1,875 timers a second).
        (
            "upcoming",
            "SELECT d.session, d.at FROM fh_deadlines d JOIN fh_sessions s ON s.id = d.session "
                + "WHERE d.at > $1 AND fh_unheld(s.owner, s.holder, $3) "
                + "AND NOT EXISTS (SELECT 1 FROM fh_paused p WHERE p.session = d.session) ORDER BY d.at LIMIT $2"
        ),
        ("activity.stamp", "UPDATE fh_sessions SET left_at = $1 WHERE left_at IS NULL"),
        (
            "activity.abandoned",
            "SELECT s.id FROM fh_sessions s WHERE s.left_at < $1 AND fh_unheld(s.owner, s.holder, $3) "
                + "AND NOT EXISTS (SELECT 1 FROM fh_deadlines d WHERE d.session = s.id) ORDER BY s.left_at LIMIT $2"
        ),
        ("activity.touch", "UPDATE fh_sessions SET left_at = $2 WHERE id = $1"),
        ("session.retire", "SELECT fh_retire($1, $2, $3)"),
        // A replica's lease: renewed every quarter of it; rows of replicas gone for an hour are deleted.
        (
            "renew",
            "WITH gone AS (DELETE FROM fh_replicas WHERE seen < now() - interval '1 hour') "
                + "INSERT INTO fh_replicas VALUES($1, now()) ON CONFLICT (id) DO UPDATE SET seen = now()"
        ),
        ("retire", "DELETE FROM fh_replicas WHERE id = $1"),
        ("deadlines", "SELECT count(*) FROM fh_deadlines"),
        ("probe", "INSERT INTO fh_meta VALUES('probe', $1) ON CONFLICT (name) DO UPDATE SET value = EXCLUDED.value"),
        (
            "compact.events",
            "DELETE FROM fh_events e WHERE NOT EXISTS (SELECT 1 FROM fh_sessions s WHERE s.id = e.session) "
                + "OR e.rev <= coalesce((SELECT min(h.rev) FROM fh_history h WHERE h.session = e.session), "
                + "(SELECT n.rev FROM fh_snapshots n WHERE n.session = e.session), -1)"
        ),
        ("compact.snapshots", "DELETE FROM fh_snapshots WHERE session NOT IN (SELECT id FROM fh_sessions)"),
        ("compact.history", "DELETE FROM fh_history WHERE session NOT IN (SELECT id FROM fh_sessions)"),
        (
            "compact.answers",
            """
            DELETE FROM fh_answers WHERE session NOT IN (SELECT id FROM fh_sessions) OR seq IN (
                SELECT seq FROM (
                    SELECT seq, row_number() OVER (PARTITION BY session ORDER BY seq DESC) AS newer FROM fh_answers) a
                WHERE newer > $1)
            """
        ),
        ("compact.deadlines", "DELETE FROM fh_deadlines WHERE session NOT IN (SELECT id FROM fh_sessions)"),
        ("compact.tokens", "DELETE FROM fh_tokens WHERE session NOT IN (SELECT id FROM fh_sessions)"),
        ("compact.quarantine", "DELETE FROM fh_quarantine WHERE session NOT IN (SELECT id FROM fh_sessions)"),
        ("quarantine", "SELECT fh_quarantine($1, $2, $3, $4)"),
        ("quarantine.release", "DELETE FROM fh_quarantine WHERE session = $1"),
        ("quarantine.read", "SELECT session, reason, at, replica FROM fh_quarantine WHERE session = $1"),
        ("quarantine.list", "SELECT session, reason, at, replica FROM fh_quarantine ORDER BY at, session LIMIT $1"),
        (
            "bytes",
            "SELECT sum(pg_total_relation_size(c))::bigint FROM unnest(ARRAY['fh_sessions', 'fh_events', "
                + "'fh_snapshots', 'fh_answers', 'fh_deadlines', 'fh_meta', 'fh_tokens', "
                + "'fh_quarantine', 'fh_clients', 'fh_paused']::regclass[]) c"
        ),
    ]

    static let fingerprintKeyName = "fingerprint.key"
    static let readMeta = "SELECT value FROM fh_meta WHERE name = "

    /// The text of a file of `Schema`; a missing one is a build mistake, caught by the first PostgreSQL journal opened.
    private static func embedded(_ name: String) -> String {
        guard let text = EmbeddedFiles.text(named: name) else {
            preconditionFailure("Schema/\(name) was not embedded; EmbedFiles embeds every file there")
        }
        return text
    }
}
