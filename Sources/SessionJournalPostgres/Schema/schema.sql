-- The PostgreSQL journal's tables and functions (PostgresSchema.swift says what each holds). PostgresJournal.open
-- runs this file and then records the schema version, in one transaction (`psql -1 -f schema.sql` does the same
-- but for the version): it creates what is missing and replaces the functions.
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
-- Schema version 2 (issue 32): the feedback whose effect produced an event (NULL for a client's, and on older rows),
-- and when a kept snapshot was written (ms since 1970; NULL on older rows, which count as old) for an age retention.
ALTER TABLE fh_events ADD COLUMN IF NOT EXISTS feedback text;
ALTER TABLE fh_history ADD COLUMN IF NOT EXISTS at bigint;
CREATE TABLE IF NOT EXISTS fh_answers(
    seq bigserial PRIMARY KEY, session text NOT NULL, key text NOT NULL, fingerprint bigint NOT NULL,
    epoch bigint NOT NULL, rev bigint NOT NULL, state text NOT NULL, crc bigint NOT NULL);
CREATE INDEX IF NOT EXISTS fh_answers_by_session ON fh_answers(session, seq);
CREATE TABLE IF NOT EXISTS fh_deadlines(session text PRIMARY KEY, at bigint NOT NULL);
CREATE INDEX IF NOT EXISTS fh_deadlines_by_time ON fh_deadlines(at);
CREATE TABLE IF NOT EXISTS fh_meta(name text PRIMARY KEY, value text NOT NULL);
CREATE TABLE IF NOT EXISTS fh_tokens(session text PRIMARY KEY, generation bigint NOT NULL, crc bigint NOT NULL);
-- Sessions the process died inside of (issue 31), held out of service until released: why, when (ms since 1970),
-- and the host that recorded it. Deleted with the session and by its re-creation (fh_forget).
CREATE TABLE IF NOT EXISTS fh_quarantine(
    session text PRIMARY KEY, reason text NOT NULL, at bigint NOT NULL, replica text);
CREATE INDEX IF NOT EXISTS fh_quarantine_by_time ON fh_quarantine(at);
-- Each client's last numbered post per session (issue 34): its sequence and the answer it got, replaced in the
-- transaction of the post's events (fh_client), read in the one that takes the session, deleted with the session.
CREATE TABLE IF NOT EXISTS fh_clients(
    session text NOT NULL, client text NOT NULL, seq bigint NOT NULL, epoch bigint NOT NULL, rev bigint NOT NULL,
    status integer NOT NULL, answer text NOT NULL, crc bigint NOT NULL, PRIMARY KEY (session, client));
-- The sessions whose effects are paused (issue 32: a fork until it is resumed), written by their owner (fh_pause),
-- deleted with the session and by its re-creation (fh_forget). Their deadlines wake nothing while paused.
CREATE TABLE IF NOT EXISTS fh_paused(session text PRIMARY KEY);

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
    DELETE FROM fh_quarantine WHERE session = p_session;
    DELETE FROM fh_clients WHERE session = p_session;
    DELETE FROM fh_paused WHERE session = p_session;
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

-- fh_create that also keeps the initial state as the session's first kept snapshot (revision 0, checksum
-- p_history_crc) when its history retention keeps snapshots (schema version 2), as SQLite's journal does.
CREATE OR REPLACE FUNCTION fh_create(
    p_id text, p_system text, p_epoch bigint, p_state text, p_created double precision, p_crc bigint,
    p_owner bigint, p_holder bigint, p_version bigint, p_history_crc bigint) RETURNS boolean
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM fh_create(p_id, p_system, p_epoch, p_state, p_created, p_crc, p_owner, p_holder, p_version);
    IF p_history_crc IS NOT NULL THEN
        INSERT INTO fh_history(session, rev, version, state, crc, at)
            VALUES(p_id, 0, p_version, p_state, p_history_crc, (extract(epoch FROM now()) * 1000)::bigint);
    END IF;
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

CREATE OR REPLACE FUNCTION fh_event(
    p_session text, p_owner bigint, p_rev bigint, p_origin integer, p_event text, p_crc bigint,
    p_version bigint, p_at bigint, p_state_sum bigint, p_feedback text) RETURNS boolean
LANGUAGE plpgsql AS $$
BEGIN
    IF NOT fh_owns(p_session, p_owner) THEN RETURN false; END IF;
    INSERT INTO fh_events(session, rev, origin, event, crc, version, at, state_sum, feedback)
        VALUES(p_session, p_rev, p_origin, p_event, p_crc, p_version, p_at, p_state_sum, p_feedback);
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

-- fh_events with each event's feedback (schema version 2).
CREATE OR REPLACE FUNCTION fh_events(
    p_sessions text[], p_owners bigint[], p_revs bigint[], p_origins integer[], p_events text[],
    p_crcs bigint[], p_versions bigint[], p_ats bigint[], p_state_sums bigint[], p_feedbacks text[])
    RETURNS integer[]
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
    INSERT INTO fh_events(session, rev, origin, event, crc, version, at, state_sum, feedback)
        SELECT u.s, u.r, u.og, u.e, u.c, u.v, u.a, u.ss, u.fb
        FROM unnest(p_sessions, p_owners, p_revs, p_origins, p_events, p_crcs, p_versions, p_ats,
            p_state_sums, p_feedbacks) AS u(s, o, r, og, e, c, v, a, ss, fb)
        WHERE u.s || ':' || u.o = ANY(held);
    SELECT coalesce(array_agg(u.i::integer ORDER BY u.i), '{}') INTO refused
        FROM unnest(p_sessions, p_owners) WITH ORDINALITY AS u(s, o, i)
        WHERE NOT (u.s || ':' || coalesce(u.o::text, '') = ANY(held));
    RETURN refused;
END $$;

-- The latest snapshot, kept in fh_history under a retention (schema version 2): p_mode 'snapshots' keeps the newest
-- p_amount (0: none, only the latest), 'events' the kept snapshots from the newest at or before p_rev - p_amount,
-- 'age' those from the newest written at or before p_now - p_amount (ms), 'forever' all. Then only the events up to
-- the oldest kept one are deleted, from the last cut on (see below).
CREATE OR REPLACE FUNCTION fh_snapshot(
    p_session text, p_owner bigint, p_rev bigint, p_state text, p_crc bigint, p_version bigint,
    p_mode text, p_amount bigint, p_now bigint) RETURNS boolean
LANGUAGE plpgsql AS $$
DECLARE
    v_cut bigint;
    v_upto bigint;
    v_drop bigint;
BEGIN
    IF NOT fh_owns(p_session, p_owner) THEN RETURN false; END IF;
    SELECT cut INTO v_cut FROM fh_snapshots WHERE session = p_session;
    v_upto := p_rev;
    IF p_mode <> 'snapshots' OR p_amount > 0 THEN
        INSERT INTO fh_history(session, rev, version, state, crc, at)
            VALUES(p_session, p_rev, p_version, p_state, p_crc, p_now)
            ON CONFLICT (session, rev) DO UPDATE SET version = EXCLUDED.version, state = EXCLUDED.state,
                crc = EXCLUDED.crc, at = EXCLUDED.at;
        v_drop := NULL;
        IF p_mode = 'snapshots' THEN
            SELECT rev + 1 INTO v_drop FROM fh_history WHERE session = p_session
                ORDER BY rev DESC OFFSET p_amount LIMIT 1;
        ELSIF p_mode = 'events' THEN
            SELECT max(rev) INTO v_drop FROM fh_history WHERE session = p_session AND rev <= p_rev - p_amount;
        ELSIF p_mode = 'age' THEN
            SELECT max(rev) INTO v_drop FROM fh_history WHERE session = p_session
                AND coalesce(at, 0) <= p_now - p_amount;
        END IF;
        IF v_drop IS NOT NULL THEN
            DELETE FROM fh_history WHERE session = p_session AND rev < v_drop;
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

CREATE OR REPLACE FUNCTION fh_client(
    p_session text, p_owner bigint, p_client text, p_seq bigint, p_epoch bigint, p_rev bigint, p_status integer,
    p_answer text, p_crc bigint) RETURNS boolean
LANGUAGE plpgsql AS $$
BEGIN
    IF NOT fh_owns(p_session, p_owner) THEN RETURN false; END IF;
    INSERT INTO fh_clients VALUES(p_session, p_client, p_seq, p_epoch, p_rev, p_status, p_answer, p_crc)
        ON CONFLICT (session, client) DO UPDATE SET seq = EXCLUDED.seq, epoch = EXCLUDED.epoch, rev = EXCLUDED.rev,
            status = EXCLUDED.status, answer = EXCLUDED.answer, crc = EXCLUDED.crc;
    RETURN true;
END $$;

-- The session forgot a client (it remembers the most recently active ones): its row goes.
CREATE OR REPLACE FUNCTION fh_forget_client(p_session text, p_owner bigint, p_client text) RETURNS boolean
LANGUAGE plpgsql AS $$
BEGIN
    IF NOT fh_owns(p_session, p_owner) THEN RETURN false; END IF;
    DELETE FROM fh_clients WHERE session = p_session AND client = p_client;
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

-- A fork's effects paused (true) or resumed (false), by the session's owner only.
CREATE OR REPLACE FUNCTION fh_pause(p_session text, p_owner bigint, p_paused boolean) RETURNS boolean
LANGUAGE plpgsql AS $$
BEGIN
    IF NOT fh_owns(p_session, p_owner) THEN RETURN false; END IF;
    IF p_paused THEN
        INSERT INTO fh_paused VALUES(p_session) ON CONFLICT (session) DO NOTHING;
    ELSE
        DELETE FROM fh_paused WHERE session = p_session;
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

-- A quarantine, by whichever replica found that the process died inside the session's code: recorded whoever owns
-- the session, which is let go (owner NULL, as an adoption does), so that a replica holding it in memory is fenced
-- at its next write, and its reads, which confirm ownership first, read it back and find it quarantined.
CREATE OR REPLACE FUNCTION fh_quarantine(p_session text, p_reason text, p_at bigint, p_replica text) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO fh_quarantine VALUES(p_session, p_reason, p_at, p_replica)
        ON CONFLICT (session) DO UPDATE SET reason = EXCLUDED.reason, at = EXCLUDED.at, replica = EXCLUDED.replica;
    UPDATE fh_sessions SET owner = NULL, fence = fence + 1,
        left_at = (extract(epoch FROM clock_timestamp()) * 1000)::bigint
        WHERE id = p_session AND owner IS NOT NULL;
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
