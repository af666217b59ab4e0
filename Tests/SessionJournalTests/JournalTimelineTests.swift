import Foundation
import PostgresFixture
import Testing

@testable import SessionJournal
@testable import SessionJournalPostgres

/// Issue 32's journal: one session's history read by range (through SQLite's `timeline` index, whether the background
/// step indexed it yet or not; PostgreSQL's (session, rev) key), each effect event's feedback, and history retention.
@Suite(.timeLimit(.minutes(2))) struct JournalTimelineTests {
    /// Two interleaved sessions of 250 events, snapshots every 100, every third event an effect's with its feedback.
    private static func write(
        _ journal: any SessionJournaling,
        _ ids: [String],
        revisions: ClosedRange<UInt64> = 1...250
    ) throws {
        if revisions.lowerBound == 1 {
            try journal.appendAndWait(ids.map { .created(JournalFixtures.creation($0)) })
        }
        for revision in revisions {
            var records: [JournalRecord] = []
            for id in ids {
                let effect = revision % 3 == 0
                let stamp = EventStamp(version: 1, time: 1_000 + Int64(revision), feedback: effect ? "ticker" : nil)
                records.append(
                    .event(
                        sessionID: id,
                        revision: revision,
                        event: #"{"type":"add","n":\#(revision)}"#,
                        origin: effect ? .effect : .client,
                        stamp: stamp
                    )
                )
                if revision % 100 == 0 {
                    records.append(.snapshot(sessionID: id, revision: revision, state: #"{"at":\#(revision)}"#))
                }
            }
            try journal.appendAndWait(records)
        }
    }

    /// One integer the journal's SQLite answers, read on its writer queue.
    private static func integer(_ journal: Journal, _ sql: String) throws -> Int64 {
        try journal.withStore { store throws(JournalError) in try store.connection.integer(sql) }
    }

    /// Waits until the index reaches within `lag` rows of the log's last row. The steps are the outcome; the wait is
    /// bounded by the suite's time limit.
    private static func indexed(_ journal: Journal, within lag: Int64 = 0) async throws {
        let last = try integer(journal, JournalSchema.lastSeq)
        let mark = "SELECT coalesce((SELECT value FROM meta WHERE name = 'timeline.through'), 0)"
        while try integer(journal, mark) < last - lag {
            try await Task.sleep(for: .milliseconds(5))
        }
    }

    @Test(arguments: JournalBackend.allCases)
    func aRangeOfOneSessionReadsTheSameBeforeAndAfterIndexing(_ backend: JournalBackend) throws {
        let place = try JournalPlace(backend)
        defer { place.remove() }
        let journal = try place.open(
            JournalConfiguration(compactionIntervalMilliseconds: 0).keepingHistory(.forever, systems: [:])
        )
        defer { journal.close() }
        let (a, b) = (JournalFixtures.id(1), JournalFixtures.id(2))
        try Self.write(journal, [a, b])
        func check() throws {
            let range = try #require(try journal.history(of: a, from: 150, through: 180))
            #expect(range.problems.isEmpty)
            #expect(range.keptFrom == 0)
            #expect(range.head == 250)
            #expect(range.snapshots.map(\.revision) == [100])
            #expect(range.events.map(\.revision) == Array(101...180))
            #expect(range.events.first { $0.revision == 102 }?.stamp.feedback == "ticker")
            #expect(range.events.first { $0.revision == 102 }?.origin == .effect)
            #expect(range.events.first { $0.revision == 101 }?.stamp.feedback == nil)
            let start = try #require(try journal.history(of: b, from: 0, through: 3))
            #expect(start.snapshots.map(\.revision) == [0])
            #expect(start.events.map(\.revision) == [1, 2, 3])
            let crossing = try #require(try journal.history(of: b, from: 199, through: 201))
            #expect(crossing.snapshots.map(\.revision) == [100, 200])
            #expect(crossing.events.map(\.revision) == Array(101...201))
        }
        try check()
        _ = try journal.compact()  // indexes the whole log (SQLite)
        try check()
        #expect(try journal.history(of: "nobody-here-at-all-xx", from: 0, through: 1) == nil)
    }

    /// The background step compacts the rows of the log it takes into the index before it indexes them: an event its
    /// session's oldest kept snapshot already covers gets no index row (indexing it first wrote a row for an event
    /// deleted in the same step, and left that row behind until a full `compact()`). Written with no background step,
    /// then reopened with one, so that every row is covered or not before the step sees it.
    @Test func theBackgroundStepIndexesNoEventItCompacts() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let ids = [JournalFixtures.id(5), JournalFixtures.id(6)]
        let writer = try JournalFixtures.open(
            directory,
            JournalConfiguration(compactionIntervalMilliseconds: 0).keepingHistory(2)
        )
        try Self.write(writer, ids)
        writer.close()
        let journal = try JournalFixtures.open(
            directory,
            JournalConfiguration(compactionIntervalMilliseconds: 5).keepingHistory(2)
        )
        defer { journal.close() }
        func integer(_ sql: String) throws -> Int64 { try Self.integer(journal, sql) }
        try await Self.indexed(journal)
        // The kept snapshots are 100 and 200: revisions 1...100 of both sessions are covered.
        #expect(journal.statistics.compactedEvents == 200)
        #expect(try integer("SELECT count(*) FROM timeline") == 300)
        #expect(try integer("SELECT min(rev) FROM timeline") == 101)
        let range = try #require(try journal.history(of: ids[0], from: 100, through: 250))
        #expect(range.events.map(\.revision) == Array(101...250))
        #expect(range.problems.isEmpty)
    }

    /// An event the index took in before a later snapshot covered it loses its index row when the snapshot trims the
    /// session's kept history, not at the next full `compact()` (which runs only when the server starts): with the
    /// index keeping up with the log, as it does whenever posts come slower than the background steps take rows in,
    /// `timeline` otherwise kept a row for every event ever posted. Revisions 1...150 are indexed before the
    /// snapshot at 200 covers 1...100.
    @Test func anIndexedEventALaterSnapshotCoversLosesItsIndexRow() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let ids = [JournalFixtures.id(7), JournalFixtures.id(8)]
        let journal = try JournalFixtures.open(
            directory,
            JournalConfiguration(compactionIntervalMilliseconds: 5).keepingHistory(2)
        )
        defer { journal.close() }
        func integer(_ sql: String) throws -> Int64 { try Self.integer(journal, sql) }
        try Self.write(journal, ids, revisions: 1...150)
        try await Self.indexed(journal)
        #expect(try integer("SELECT min(rev) FROM timeline") == 1)
        try Self.write(journal, ids, revisions: 151...250)
        try await Self.indexed(journal)
        // The kept snapshots are 100 and 200: revisions 101...250 of both sessions keep their rows, and no others.
        #expect(try integer("SELECT count(*) FROM timeline") == 300)
        #expect(try integer("SELECT min(rev) FROM timeline") == 101)
        let range = try #require(try journal.history(of: ids[0], from: 100, through: 250))
        #expect(range.events.map(\.revision) == Array(101...250))
        #expect(range.problems.isEmpty)
    }

    /// A removed session's events leave the log with it (as PostgreSQL's journal deletes them): the indexed ones in
    /// the removal's own commit, through the index, instead of waiting for the background sweep to come round to them
    /// (a round of the whole indexed log: minutes on a large one). No background tick runs here.
    @Test func aRemovedSessionsIndexedEventsLeaveTheLogWithIt() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let journal = try JournalFixtures.open(
            directory,
            JournalConfiguration(compactionIntervalMilliseconds: 0).keepingHistory(.forever, systems: [:])
        )
        defer { journal.close() }
        let (a, b) = (JournalFixtures.id(9), JournalFixtures.id(10))
        try Self.write(journal, [a, b])
        _ = try journal.compact()  // indexes the whole log
        func integer(_ sql: String) throws -> Int64 { try Self.integer(journal, sql) }
        #expect(try integer("SELECT count(*) FROM events WHERE session = '\(a)'") == 250)
        let compacted = journal.statistics.compactedEvents
        try journal.appendAndWait([.removed(sessionID: a)])
        #expect(try integer("SELECT count(*) FROM events WHERE session = '\(a)'") == 0)
        #expect(try integer("SELECT count(*) FROM timeline WHERE session = '\(a)'") == 0)
        #expect(journal.statistics.compactedEvents == compacted + 250)
        #expect(try integer("SELECT count(*) FROM events WHERE session = '\(b)'") == 250)
        let range = try #require(try journal.history(of: b, from: 150, through: 180))
        #expect(range.events.map(\.revision) == Array(101...180))
        #expect(try journal.history(of: a, from: 0, through: 1) == nil)
    }

    /// Posts written faster than the timer's steps take rows in: ticks then run between group commits too, until the
    /// index is back within `catchUpSteps` steps of the log, so that compaction keeps pace and the log stays bounded
    /// (with the timer's ticks alone the log grew for as long as the load lasted). The timer here never fires: every
    /// step is a catch-up tick. One session, a snapshot every 100 revisions, 2 kept: an event is covered 100 to 200
    /// revisions after it, so a bound of 250 rows stays behind the covered ones.
    @Test func ticksRunBetweenCommitsWhileTheIndexLagsTheLog() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        var configuration = JournalConfiguration(compactionIntervalMilliseconds: 3_600_000).keepingHistory(2)
            .indexingTimeline(10)
        configuration.catchUpSteps = 25
        let journal = try JournalFixtures.open(directory, configuration)
        defer { journal.close() }
        func integer(_ sql: String) throws -> Int64 { try Self.integer(journal, sql) }
        try Self.write(journal, [JournalFixtures.id(9)], revisions: 1...1000)
        try await Self.indexed(journal, within: 250)
        #expect(journal.statistics.catchUpTicks > 0)
        #expect(journal.statistics.compactionTicks == journal.statistics.catchUpTicks)
        // The kept snapshots are 900 and 1000. The index is past 750: every event up to there is gone (covered when
        // taken in, or deleted through the index by a later snapshot), and every index row up to 900.
        #expect(try integer("SELECT min(rev) FROM events") > 750)
        #expect(try integer("SELECT coalesce(min(rev), 901) FROM timeline") > 900)
    }

    /// A tick's transaction commits without a sync of its own; every other commit syncs (`synchronous=FULL` under the
    /// per-commit policy) whatever the ticks did before it.
    @Test func aTickLeavesTheCommitsAfterItSynced() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let journal = try JournalFixtures.open(
            directory,
            JournalConfiguration(compactionIntervalMilliseconds: 5).keepingHistory(2)
        )
        defer { journal.close() }
        try Self.write(journal, [JournalFixtures.id(13)])
        try await Self.indexed(journal)
        #expect(journal.statistics.compactionTicks > 0)
        #expect(try Self.integer(journal, "PRAGMA synchronous") == 2)  // FULL
        try Self.write(journal, [JournalFixtures.id(13)], revisions: 251...260)
        try await Self.indexed(journal)
        #expect(try Self.integer(journal, "PRAGMA synchronous") == 2)
    }

    /// A catch-up tick that finds the rows it takes in not covered yet (the bound is nearer the log's head than the
    /// point where this load's events are covered) stops the catching up: indexing them would only have them deleted
    /// through the index at their sessions' next snapshots, a tenth of the posts a second under full load. The
    /// timer's next step (never, here) looks again.
    @Test func catchingUpStopsAtRowsNotCoveredYet() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        var configuration = JournalConfiguration(compactionIntervalMilliseconds: 3_600_000).keepingHistory(2)
            .indexingTimeline(10)
        configuration.catchUpSteps = 4
        let journal = try JournalFixtures.open(directory, configuration)
        defer { journal.close() }
        try Self.write(journal, [JournalFixtures.id(12)])
        // The first catch-up, 41 rows behind, took in revisions 1...10, which no kept snapshot covered yet.
        #expect(journal.statistics.catchUpTicks == 1)
        let mark = "SELECT coalesce((SELECT value FROM meta WHERE name = 'timeline.through'), 0)"
        #expect(try Self.integer(journal, mark) == 10)
    }

    /// A compaction step counts rows that exist, not positions: from the start of a log whose first 250 positions
    /// are gone, a step of 100 rows reaches the next 100 events (a step of positions went over the gone ones, and a
    /// long-running server's sweep crawled over its whole deleted past before it reached anything).
    @Test func aCompactionStepCountsTheRowsThatExist() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let journal = try JournalFixtures.open(
            directory,
            JournalConfiguration(compactionIntervalMilliseconds: 0).keepingHistory(2)
        )
        defer { journal.close() }
        let (gone, kept) = (JournalFixtures.id(10), JournalFixtures.id(11))
        try Self.write(journal, [gone])
        try journal.appendAndWait([.removed(sessionID: gone)])
        try journal.withStore { store throws(JournalError) in try store.connection.execute("DELETE FROM events") }
        // The kept snapshots are 100 and 200: revisions 1...100 are covered, at positions 251...350.
        try Self.write(journal, [kept])
        let deleted = try journal.withStore { store throws(JournalError) in try store.compactStep(rows: 100) }
        #expect(deleted == 100)
        let first = try journal.withStore { store throws(JournalError) in
            try store.connection.integer("SELECT min(rev) FROM events")
        }
        #expect(first == 101)
    }

    @Test(arguments: JournalBackend.allCases)
    func retentionByEventsKeepsAtLeastThatManyAndCompactionRespectsIt(_ backend: JournalBackend) throws {
        let place = try JournalPlace(backend)
        defer { place.remove() }
        let journal = try place.open(
            JournalConfiguration(compactionIntervalMilliseconds: 0).keepingHistory(.events(50), systems: [:])
        )
        defer { journal.close() }
        let id = JournalFixtures.id(3)
        try Self.write(journal, [id])
        _ = try journal.compact()
        // At the snapshot at 200 the last 50 events reach back to 150: the snapshot at 100 is the one kept before it.
        let bounds = try #require(try journal.history(of: id, from: 0, through: 0))
        #expect(bounds.keptFrom == 100)
        #expect(bounds.snapshots.isEmpty)  // revision 0 is no longer kept
        let kept = try #require(try journal.history(of: id, from: 100, through: 250))
        #expect(kept.snapshots.map(\.revision) == [100, 200])
        #expect(kept.events.map(\.revision) == Array(101...250))
        #expect(kept.problems.isEmpty)
    }

    /// Issue 32, item 5: the latest snapshot (what an activation loads) changed with its record checksum recomputed is
    /// no longer hidden behind the kept snapshot at its revision: the whole history (what `verify` replays) says so.
    @Test(arguments: JournalBackend.allCases)
    func aLatestSnapshotThatDiffersFromTheKeptOneIsAProblem(_ backend: JournalBackend) throws {
        let place = try JournalPlace(backend)
        defer { place.remove() }
        let journal = try place.open(JournalConfiguration(compactionIntervalMilliseconds: 0).keepingHistory(2))
        defer { journal.close() }
        let id = JournalFixtures.id(4)
        try Self.write(journal, [id])
        #expect(try journal.history(of: id)?.problems == [])
        let state = #"{"at":1200}"#
        let crc = RecordChecksum.snapshot(id, 200, state, version: 1)
        try place.tamper(
            journal,
            sqlite: "UPDATE snapshots SET state = '\(state)', crc = \(crc) WHERE session = '\(id)'",
            postgres: "UPDATE fh_snapshots SET state = '\(state)', crc = \(crc) WHERE session = '\(id)'"
        )
        let history = try #require(try journal.history(of: id))
        #expect(
            history.problems == ["the latest snapshot at revision 200 differs from the kept snapshot at that revision"]
        )
        var seen: [String] = []
        try journal.readHistories(batchSize: 10) { batch in seen += batch.flatMap(\.problems) }
        #expect(seen == history.problems)
    }

    @Test(arguments: ["1", "2"])
    func anOlderDatabaseOpensAsVersionThree(older: String) throws {
        let place = try JournalPlace(.postgres)
        defer { place.remove() }
        try place.open().close()
        let server = try PostgresServer.shared()
        _ = try server.psql(place.url!, "UPDATE fh_meta SET value = '\(older)' WHERE name = 'schema.version'")
        let journal = try place.open()
        journal.close()
        let version = try server.psql(place.url!, "SELECT value FROM fh_meta WHERE name = 'schema.version'")
        #expect(version.trimmingCharacters(in: .whitespacesAndNewlines) == "3")
    }

    /// A database a newer build wrote is refused before anything of this build's schema is applied: its functions
    /// stay the newer build's (an older replica in a rolling upgrade must not replace them with its own).
    @Test func aNewerDatabaseIsRefusedWithItsFunctionsUntouched() throws {
        let place = try JournalPlace(.postgres)
        defer { place.remove() }
        try place.open().close()
        let server = try PostgresServer.shared()
        // What a newer build would have written: another version, and a function of its own.
        _ = try server.psql(
            place.url!,
            "UPDATE fh_meta SET value = '4' WHERE name = 'schema.version'; "
                + "CREATE OR REPLACE FUNCTION fh_owns(p_session text, p_owner bigint) RETURNS boolean "
                + "LANGUAGE sql AS $$ SELECT true /* written by version 4 */ $$"
        )
        var refusal: String?
        do {
            try place.open().close()
        } catch {
            refusal = "\(error)"
        }
        #expect(refusal?.contains("schema version 4") == true, "\(refusal ?? "opened")")
        let body = try server.psql(place.url!, "SELECT prosrc FROM pg_proc WHERE proname = 'fh_owns'")
        #expect(body.contains("written by version 4"), "\(body)")
    }

    /// SQLite refuses a misuse of its interface and goes on with what it had (a bound statement left bound): nothing
    /// fails, so only its log shows it. Over a journal's whole life (appends of every kind a post makes, snapshots, the
    /// background ticks, history reads, a full compaction, recovery, a reopen) it reports none. (Every journaled event
    /// was unbound before its statement's reset until 22bff01: two misuses a post.)
    @Test func sqliteReportsNoMisuseOverAJournalsLife() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let ids = [JournalFixtures.id(3), JournalFixtures.id(4)]
        let before = SQLiteLog.misuseCount
        let configuration = JournalConfiguration(compactionIntervalMilliseconds: 5).keepingHistory(2)
        do {
            let journal = try JournalFixtures.open(directory, configuration)
            defer { journal.close() }
            try Self.write(journal, ids, revisions: 1...150)
            try await Self.indexed(journal)
            try journal.appendAndWait([.removed(sessionID: ids[1])])
            #expect(try journal.history(of: ids[0], from: 100, through: 150)?.events.count == 50)
            _ = try journal.compact()
            #expect(try journal.recover().sessions.map(\.creation.id) == [ids[0]])
        }
        let reopened = try JournalFixtures.open(directory, configuration)
        defer { reopened.close() }
        #expect(try reopened.recover().sessions.first?.events.last?.revision == 150)
        #expect(SQLiteLog.misuseCount == before)
    }
}
