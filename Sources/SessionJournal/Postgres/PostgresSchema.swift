/// The PostgreSQL journal's tables, functions and prepared statements.
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
/// - `fh_history`: the newest `JournalConfiguration.historySnapshots` snapshots of each session, kept for
///   `feedback-host verify` and the export route; a snapshot then deletes only the events up to the oldest kept one,
///   so the events between kept snapshots stay (as the SQLite journal's `history`).
/// - `fh_snapshots`, `fh_answers` (keyed answers, the newest `answersPerSession` of each session), `fh_deadlines`
///   (indexed by time), `fh_meta` (the fingerprint key, the schema version).
/// - `fh_tokens`: each session's token generation (`JournalRecord.tokens`, `--auth jwt`'s revocations; no row for 0),
///   with its checksum. Written by the owner through `fh_tokens` (fenced like every record), read in the transaction
///   that takes the session, deleted with the session and by its re-creation (`fh_forget`).
///
/// Every write of a session goes through a function that first checks, with `FOR SHARE` on the session's row, that
/// the caller's token is the owner, and writes nothing (returns false) when it is not: the share lock is held until
/// the commit, so a takeover (an `UPDATE` of the row) waits for every append that passed the check, and an append
/// checked after a takeover sees the new owner. Creation (`fh_create`) takes the row whoever owned it.
enum PostgresSchema {
    static let version = "1"

    /// Creates what is missing, under an advisory lock so that replicas starting together do not race.
    static let create = """
        SELECT pg_advisory_xact_lock(7206150371);
        CREATE TABLE IF NOT EXISTS fh_sessions(
            id text PRIMARY KEY, system text NOT NULL, epoch bigint NOT NULL, state text NOT NULL,
            created double precision NOT NULL, crc bigint NOT NULL, owner bigint, holder bigint,
            fence bigint NOT NULL DEFAULT 1);
        ALTER TABLE fh_sessions ADD COLUMN IF NOT EXISTS left_at bigint;
        -- The systems' schema versions (issue 22): of the creation's state, of a snapshot, of an event (with the time
        -- it was recorded and the checksum of the state it produced). Rows written before read as version 1.
        ALTER TABLE fh_sessions ADD COLUMN IF NOT EXISTS version bigint NOT NULL DEFAULT 1;
        CREATE INDEX IF NOT EXISTS fh_sessions_by_left ON fh_sessions(left_at);
        CREATE TABLE IF NOT EXISTS fh_replicas(id bigint PRIMARY KEY, seen timestamptz NOT NULL);
        CREATE TABLE IF NOT EXISTS fh_events(
            session text NOT NULL, rev bigint NOT NULL, origin integer NOT NULL, event text NOT NULL,
            crc bigint NOT NULL, PRIMARY KEY (session, rev));
        CREATE TABLE IF NOT EXISTS fh_snapshots(
            session text PRIMARY KEY, rev bigint NOT NULL, state text NOT NULL, crc bigint NOT NULL);
        ALTER TABLE fh_events ADD COLUMN IF NOT EXISTS version bigint NOT NULL DEFAULT 1,
            ADD COLUMN IF NOT EXISTS at bigint, ADD COLUMN IF NOT EXISTS state_sum bigint;
        ALTER TABLE fh_snapshots ADD COLUMN IF NOT EXISTS version bigint NOT NULL DEFAULT 1;
        -- Up to which revision the session's events are deleted (see fh_snapshot); NULL: not known.
        ALTER TABLE fh_snapshots ADD COLUMN IF NOT EXISTS cut bigint;
        CREATE TABLE IF NOT EXISTS fh_history(
            session text NOT NULL, rev bigint NOT NULL, version bigint NOT NULL, state text NOT NULL,
            crc bigint NOT NULL, PRIMARY KEY (session, rev));
        CREATE TABLE IF NOT EXISTS fh_answers(
            seq bigserial PRIMARY KEY, session text NOT NULL, key text NOT NULL, fingerprint bigint NOT NULL,
            epoch bigint NOT NULL, rev bigint NOT NULL, state text NOT NULL, crc bigint NOT NULL);
        CREATE INDEX IF NOT EXISTS fh_answers_by_session ON fh_answers(session, seq);
        CREATE TABLE IF NOT EXISTS fh_deadlines(session text PRIMARY KEY, at bigint NOT NULL);
        CREATE INDEX IF NOT EXISTS fh_deadlines_by_time ON fh_deadlines(at);
        CREATE TABLE IF NOT EXISTS fh_meta(name text PRIMARY KEY, value text NOT NULL);
        CREATE TABLE IF NOT EXISTS fh_tokens(session text PRIMARY KEY, generation bigint NOT NULL, crc bigint NOT NULL);
        INSERT INTO fh_meta VALUES('schema.version', '\(version)') ON CONFLICT DO NOTHING;

        CREATE OR REPLACE FUNCTION fh_owns(p_session text, p_owner bigint) RETURNS boolean
        LANGUAGE plpgsql AS $$
        BEGIN
            PERFORM 1 FROM fh_sessions WHERE id = p_session AND owner = p_owner FOR SHARE;
            RETURN FOUND;
        END $$;

        CREATE OR REPLACE FUNCTION fh_forget(p_session text) RETURNS void
        LANGUAGE sql AS $$
            DELETE FROM fh_events WHERE session = p_session;
            DELETE FROM fh_snapshots WHERE session = p_session;
            DELETE FROM fh_history WHERE session = p_session;
            DELETE FROM fh_answers WHERE session = p_session;
            DELETE FROM fh_deadlines WHERE session = p_session;
            DELETE FROM fh_tokens WHERE session = p_session;
        $$;

        CREATE OR REPLACE FUNCTION fh_create(
            p_id text, p_system text, p_epoch bigint, p_state text, p_created double precision, p_crc bigint,
            p_owner bigint, p_holder bigint, p_version bigint) RETURNS boolean
        LANGUAGE plpgsql AS $$
        BEGIN
            INSERT INTO fh_sessions(id, system, epoch, state, created, crc, owner, holder, version)
                VALUES(p_id, p_system, p_epoch, p_state, p_created, p_crc, p_owner, p_holder, p_version)
                ON CONFLICT (id) DO UPDATE SET system = EXCLUDED.system, epoch = EXCLUDED.epoch,
                    version = EXCLUDED.version,
                    state = EXCLUDED.state, created = EXCLUDED.created, crc = EXCLUDED.crc, owner = EXCLUDED.owner,
                    holder = EXCLUDED.holder, fence = fh_sessions.fence + 1, left_at = NULL;
            PERFORM fh_forget(p_id);
            RETURN true;
        END $$;

        CREATE OR REPLACE FUNCTION fh_event(
            p_session text, p_owner bigint, p_rev bigint, p_origin integer, p_event text, p_crc bigint,
            p_version bigint, p_at bigint, p_state_sum bigint) RETURNS boolean
        LANGUAGE plpgsql AS $$
        BEGIN
            IF NOT fh_owns(p_session, p_owner) THEN RETURN false; END IF;
            INSERT INTO fh_events(session, rev, origin, event, crc, version, at, state_sum)
                VALUES(p_session, p_rev, p_origin, p_event, p_crc, p_version, p_at, p_state_sum);
            RETURN true;
        END $$;

        -- Many sessions' events in one call (a group commit's run of posts): the 1-based positions refused. Set-based,
        -- not a loop of fh_event: the owned sessions' rows are share-locked once each, in id order, then every event
        -- of an owned (session, token) is inserted by one statement (a loop ran two statements per event, and their
        -- executor set-up was most of PostgreSQL's work per posted event).
        CREATE OR REPLACE FUNCTION fh_events(
            p_sessions text[], p_owners bigint[], p_revs bigint[], p_origins integer[], p_events text[],
            p_crcs bigint[], p_versions bigint[], p_ats bigint[], p_state_sums bigint[]) RETURNS integer[]
        LANGUAGE plpgsql AS $$
        DECLARE
            held text[];
            refused integer[];
        BEGIN
            SELECT coalesce(array_agg(h.id || ':' || h.owner), '{}') INTO held FROM (
                SELECT f.id, f.owner FROM fh_sessions f
                JOIN (SELECT DISTINCT u.s, u.o FROM unnest(p_sessions, p_owners) AS u(s, o)) w
                    ON f.id = w.s AND f.owner = w.o
                ORDER BY f.id FOR SHARE OF f) h;
            INSERT INTO fh_events(session, rev, origin, event, crc, version, at, state_sum)
                SELECT u.s, u.r, u.og, u.e, u.c, u.v, u.a, u.ss
                FROM unnest(p_sessions, p_owners, p_revs, p_origins, p_events, p_crcs, p_versions, p_ats,
                    p_state_sums) AS u(s, o, r, og, e, c, v, a, ss)
                WHERE u.s || ':' || u.o = ANY(held);
            SELECT coalesce(array_agg(u.i::integer ORDER BY u.i), '{}') INTO refused
                FROM unnest(p_sessions, p_owners) WITH ORDINALITY AS u(s, o, i)
                WHERE NOT (u.s || ':' || coalesce(u.o::text, '') = ANY(held));
            RETURN refused;
        END $$;

        -- The latest snapshot; with p_keep > 0 also kept in fh_history (its newest p_keep), and only the events up to
        -- the oldest kept one deleted. `cut` remembers up to which revision the events are deleted, so each snapshot
        -- deletes only the events since the last cut: an index range from the cut, not from the session's first entry
        -- through every row that earlier snapshots deleted and no vacuum has removed yet (until the next vacuum, a
        -- busy session's snapshot cost grew with the events it had had). A row without a cut is cut from the start.
        CREATE OR REPLACE FUNCTION fh_snapshot(
            p_session text, p_owner bigint, p_rev bigint, p_state text, p_crc bigint, p_version bigint,
            p_keep integer) RETURNS boolean
        LANGUAGE plpgsql AS $$
        DECLARE
            v_cut bigint;
            v_upto bigint;
            v_drop bigint;
        BEGIN
            IF NOT fh_owns(p_session, p_owner) THEN RETURN false; END IF;
            SELECT cut INTO v_cut FROM fh_snapshots WHERE session = p_session;
            v_upto := p_rev;
            IF p_keep > 0 THEN
                INSERT INTO fh_history VALUES(p_session, p_rev, p_version, p_state, p_crc)
                    ON CONFLICT (session, rev) DO UPDATE SET version = EXCLUDED.version, state = EXCLUDED.state,
                        crc = EXCLUDED.crc;
                SELECT rev INTO v_drop FROM fh_history WHERE session = p_session ORDER BY rev DESC OFFSET p_keep LIMIT 1;
                IF v_drop IS NOT NULL THEN
                    DELETE FROM fh_history WHERE session = p_session AND rev <= v_drop;
                END IF;
                SELECT min(rev) INTO v_upto FROM fh_history WHERE session = p_session;
            END IF;
            INSERT INTO fh_snapshots(session, rev, state, crc, version, cut)
                VALUES(p_session, p_rev, p_state, p_crc, p_version, v_upto)
                ON CONFLICT (session) DO UPDATE SET rev = EXCLUDED.rev, state = EXCLUDED.state, crc = EXCLUDED.crc,
                    version = EXCLUDED.version, cut = EXCLUDED.cut;
            DELETE FROM fh_events WHERE session = p_session AND rev <= v_upto
                AND rev > coalesce(v_cut, -9223372036854775808);
            RETURN true;
        END $$;

        CREATE OR REPLACE FUNCTION fh_answer(
            p_session text, p_owner bigint, p_key text, p_fingerprint bigint, p_epoch bigint, p_rev bigint,
            p_state text, p_crc bigint, p_keep integer) RETURNS boolean
        LANGUAGE plpgsql AS $$
        BEGIN
            IF NOT fh_owns(p_session, p_owner) THEN RETURN false; END IF;
            INSERT INTO fh_answers(session, key, fingerprint, epoch, rev, state, crc)
                VALUES(p_session, p_key, p_fingerprint, p_epoch, p_rev, p_state, p_crc);
            -- p_keep > 0: trimmed to the newest p_keep, which the journal asks for once a session has twice as many
            -- (`answersPerSession`, as the SQLite journal trims): finding the p_keep-th newest reads p_keep rows.
            IF p_keep > 0 THEN
                DELETE FROM fh_answers WHERE session = p_session AND seq <= (
                    SELECT seq FROM fh_answers WHERE session = p_session ORDER BY seq DESC OFFSET p_keep LIMIT 1);
            END IF;
            RETURN true;
        END $$;

        CREATE OR REPLACE FUNCTION fh_deadline(p_session text, p_owner bigint, p_at bigint) RETURNS boolean
        LANGUAGE plpgsql AS $$
        BEGIN
            IF NOT fh_owns(p_session, p_owner) THEN RETURN false; END IF;
            IF p_at IS NULL THEN
                DELETE FROM fh_deadlines WHERE session = p_session;
            ELSE
                INSERT INTO fh_deadlines VALUES(p_session, p_at) ON CONFLICT (session) DO UPDATE SET at = EXCLUDED.at;
            END IF;
            RETURN true;
        END $$;

        -- The session's token generation (0: no row), by its owner only: a superseded owner's revocation is refused.
        CREATE OR REPLACE FUNCTION fh_tokens(p_session text, p_owner bigint, p_generation bigint, p_crc bigint)
            RETURNS boolean
        LANGUAGE plpgsql AS $$
        BEGIN
            IF NOT fh_owns(p_session, p_owner) THEN RETURN false; END IF;
            IF p_generation = 0 THEN
                DELETE FROM fh_tokens WHERE session = p_session;
            ELSE
                INSERT INTO fh_tokens VALUES(p_session, p_generation, p_crc)
                    ON CONFLICT (session) DO UPDATE SET generation = EXCLUDED.generation, crc = EXCLUDED.crc;
            END IF;
            RETURN true;
        END $$;

        -- The adoption of an older version's revocations file: raises the session's generation, whoever owns it, and
        -- lets go of the session (owner NULL, as a passivation would), so that a replica holding it in memory is fenced
        -- and reads it back with the raised generation.
        CREATE OR REPLACE FUNCTION fh_adopt_tokens(p_session text, p_generation bigint, p_crc bigint) RETURNS boolean
        LANGUAGE plpgsql AS $$
        BEGIN
            PERFORM 1 FROM fh_sessions WHERE id = p_session FOR UPDATE;
            IF NOT FOUND THEN RETURN false; END IF;
            IF EXISTS (SELECT 1 FROM fh_tokens WHERE session = p_session AND generation >= p_generation) THEN
                RETURN false;
            END IF;
            INSERT INTO fh_tokens VALUES(p_session, p_generation, p_crc)
                ON CONFLICT (session) DO UPDATE SET generation = EXCLUDED.generation, crc = EXCLUDED.crc;
            UPDATE fh_sessions SET owner = NULL, fence = fence + 1,
                left_at = (extract(epoch FROM clock_timestamp()) * 1000)::bigint WHERE id = p_session;
            RETURN true;
        END $$;

        -- A passivation: the owner lets go, so that any replica may activate the session (a due timer, a request).
        CREATE OR REPLACE FUNCTION fh_release(p_session text, p_owner bigint) RETURNS boolean
        LANGUAGE plpgsql AS $$
        BEGIN
            UPDATE fh_sessions SET owner = NULL, left_at = (extract(epoch FROM clock_timestamp()) * 1000)::bigint
                WHERE id = p_session AND owner = p_owner;
            RETURN FOUND;
        END $$;

        -- Whether no live replica holds the session: no owner, or an owner whose lease lapsed (p_lease ms).
        CREATE OR REPLACE FUNCTION fh_unheld(p_owner bigint, p_holder bigint, p_lease bigint) RETURNS boolean
        LANGUAGE sql STABLE AS $$
            SELECT p_owner IS NULL OR NOT EXISTS (SELECT 1 FROM fh_replicas r
                WHERE r.id = p_holder AND r.seen > now() - make_interval(secs => p_lease::float8 / 1000));
        $$;

        -- Retention: deletes the session if no live replica holds it, it left memory before p_before and no
        -- deadline is pending; the row's lock orders it with a takeover.
        CREATE OR REPLACE FUNCTION fh_retire(p_session text, p_before bigint, p_lease bigint) RETURNS boolean
        LANGUAGE plpgsql AS $$
        BEGIN
            DELETE FROM fh_sessions s WHERE s.id = p_session AND s.left_at < p_before
                AND fh_unheld(s.owner, s.holder, p_lease)
                AND NOT EXISTS (SELECT 1 FROM fh_deadlines d WHERE d.session = p_session);
            IF NOT FOUND THEN RETURN false; END IF;
            PERFORM fh_forget(p_session);
            RETURN true;
        END $$;

        -- The owner's removal, or (p_owner NULL) a removal by whoever holds no copy (a broken session discarded).
        CREATE OR REPLACE FUNCTION fh_remove(p_session text, p_owner bigint) RETURNS boolean
        LANGUAGE plpgsql AS $$
        BEGIN
            IF p_owner IS NOT NULL AND NOT fh_owns(p_session, p_owner) THEN RETURN false; END IF;
            DELETE FROM fh_sessions WHERE id = p_session;
            PERFORM fh_forget(p_session);
            RETURN true;
        END $$;
        """

    /// The prepared statements by name: the record writers return whether the caller owned the session.
    static let statements: [(name: String, sql: String)] = [
        ("create", "SELECT fh_create($1, $2, $3, $4, $5, $6, $7, $8, $9)"),
        ("event", "SELECT fh_event($1, $2, $3, $4, $5, $6, $7, $8, $9)"),
        ("events", "SELECT fh_events($1, $2, $3, $4, $5, $6, $7, $8, $9)"),
        ("snapshot", "SELECT fh_snapshot($1, $2, $3, $4, $5, $6, $7)"),
        ("answer", "SELECT fh_answer($1, $2, $3, $4, $5, $6, $7, $8, $9)"),
        ("deadline", "SELECT fh_deadline($1, $2, $3)"),
        ("tokens", "SELECT fh_tokens($1, $2, $3, $4)"),
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
            "SELECT rev, origin, event, crc, version, at, state_sum FROM fh_events WHERE session = $1 AND rev > "
                + "coalesce((SELECT cut FROM fh_snapshots WHERE session = $1), -9223372036854775808) ORDER BY rev"
        ),
        (
            "read.answers",
            "SELECT session, key, fingerprint, epoch, rev, state, crc FROM fh_answers WHERE session = $1 ORDER BY seq"
        ),
        ("ids", "SELECT id FROM fh_sessions ORDER BY id"),
        ("count", "SELECT count(*) FROM fh_sessions"),
        (
            "due",
            "SELECT d.session, d.at FROM fh_deadlines d JOIN fh_sessions s ON s.id = d.session "
                + "WHERE d.at <= $1 AND fh_unheld(s.owner, s.holder, $3) ORDER BY d.at LIMIT $2"
        ),
        // The waker's next look, among the sessions `due` would answer (no live replica holds them): a held session's
        // timer fires in its holder's memory, and counting its deadlines here had every replica's waker query the
        // database at each of them (about 800 times a second with 1,875 timers a second).
        (
            "upcoming",
            "SELECT d.session, d.at FROM fh_deadlines d JOIN fh_sessions s ON s.id = d.session "
                + "WHERE d.at > $1 AND fh_unheld(s.owner, s.holder, $3) ORDER BY d.at LIMIT $2"
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
        (
            "bytes",
            "SELECT sum(pg_total_relation_size(c))::bigint FROM unnest(ARRAY['fh_sessions', 'fh_events', "
                + "'fh_snapshots', 'fh_answers', 'fh_deadlines', 'fh_meta', 'fh_tokens']::regclass[]) c"
        ),
    ]

    static let fingerprintKeyName = "fingerprint.key"
    static let readMeta = "SELECT value FROM fh_meta WHERE name = "
}
