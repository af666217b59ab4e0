import Foundation
import Testing

@testable import SessionJournal

/// Schema version 6: the systems' versions on every row (a version 4 file's rows read as version 1), the events'
/// stamps under their checksums, and the kept history that compaction respects.
@Suite struct JournalVersionTests {
    @Test func fileOfVersionFourOpensWithItsRowsAtVersionOneAndTakesVersionedRecords() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let id = JournalFixtures.id(1)
        try Self.writeVersionFourFile(directory.file("journal.sqlite"), id: id)

        let journal = try JournalFixtures.open(directory)
        let session = try #require(try journal.recover().sessions.first)
        #expect(session.creation.version == 1)
        #expect(session.baseRevision == 2)
        #expect(session.baseVersion == 1)
        #expect(session.events.map(\.revision) == [3])
        #expect(session.events.map(\.stamp) == [EventStamp()])
        #expect(
            try journal.withStore { store throws(JournalError) in try store.connection.integer("PRAGMA user_version") }
                == JournalSchema.version
        )
        let stamp = EventStamp(version: 2, time: 1_700_000_000_123, stateChecksum: 0xFEED_FACE_CAFE_BEEF)
        try journal.appendAndWait([
            .event(sessionID: id, revision: 4, event: #"{"type":"add","by":4}"#, origin: .effect, stamp: stamp),
            .snapshot(sessionID: id, revision: 4, state: #"{"total":10}"#, version: 2),
        ])
        journal.close()

        let reopened = try JournalFixtures.open(directory)
        defer { reopened.close() }
        let again = try #require(try reopened.recover().sessions.first)
        #expect(again.baseRevision == 4)
        #expect(again.baseVersion == 2)
        let history = try #require(try reopened.history(of: id))
        #expect(history.events.map(\.revision) == [1, 2, 3, 4])  // not compacted yet
        #expect(history.events.last?.stamp == stamp)
        #expect(history.events.last?.origin == .effect)
        #expect(history.problems.isEmpty)
    }

    @Test func compactionKeepsTheEventsAfterTheOldestKeptSnapshot() throws {
        for kept in [0, 2] {
            let directory = TemporaryDirectory()
            defer { directory.remove() }
            let journal = try JournalFixtures.open(
                directory,
                JournalConfiguration(compactionIntervalMilliseconds: 0).keepingHistory(kept)
            )
            defer { journal.close() }
            let id = JournalFixtures.id(2)
            try journal.appendAndWait([.created(JournalFixtures.creation(id))])
            for revision in UInt64(1)...12 {
                var records = [JournalFixtures.event(id, revision)]
                if revision % 5 == 0 { records.append(.snapshot(sessionID: id, revision: revision, state: "{}")) }
                try journal.appendAndWait(records)
            }
            let report = try journal.compact()
            let history = try #require(try journal.history(of: id))
            if kept == 0 {
                #expect(report.deletedEvents == 10)
                #expect(history.snapshots.map(\.revision) == [0, 10])
                #expect(history.events.map(\.revision) == Array(11...12))
            } else {
                // The snapshots at 5 and 10 are kept (the initial state was trimmed at 10), so events from 6 on are.
                #expect(report.deletedEvents == 5)
                #expect(history.snapshots.map(\.revision) == [0, 5, 10])
                #expect(history.events.map(\.revision) == Array(6...12))
            }
            #expect(try journal.recover().sessions.first?.events.map(\.revision) == [11, 12])
        }
    }

    @Test func aChangedStampFailsTheEventsChecksum() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let journal = try JournalFixtures.open(directory, JournalConfiguration().keepingHistory(2))
        defer { journal.close() }
        let id = JournalFixtures.id(3)
        let stamp = EventStamp(version: 1, time: 5, stateChecksum: 7)
        try journal.appendAndWait([
            .created(JournalFixtures.creation(id)),
            .event(sessionID: id, revision: 1, event: "{}", origin: .client, stamp: stamp),
        ])
        #expect(try journal.history(of: id)?.problems == [])
        try journal.withStore { store throws(JournalError) in
            try store.connection.execute("UPDATE events SET state_sum = 8")
        }
        #expect(try journal.history(of: id)?.problems == ["event 1 fails its checksum"])
        #expect(try journal.recover().sessions.first?.damage != nil)
    }

    /// The schema and rows as the journal wrote them at version 4: a session, events 1 to 3, a snapshot at 2.
    private static func writeVersionFourFile(_ path: String, id: String) throws {
        let connection = try SQLiteConnection(path: path)
        defer { connection.close() }
        let creation = JournalFixtures.creation(id)
        let events = (1...3).map { (revision: UInt64($0), text: #"{"type":"add","n":\#($0)}"#) }
        let rows = events.map { event in
            let sum = RecordChecksum.of(id, RecordChecksum.eventNumber(event.revision, 0), event.text)
            return "INSERT INTO events(session, rev, origin, event, crc) VALUES('\(id)', \(event.revision), 0, "
                + "'\(event.text)', \(sum));"
        }
        try connection.execute(
            """
            PRAGMA journal_mode = WAL;
            CREATE TABLE sessions(
                id TEXT PRIMARY KEY, system TEXT NOT NULL, epoch INTEGER NOT NULL, state TEXT NOT NULL,
                created REAL NOT NULL, generation INTEGER NOT NULL, crc INTEGER NOT NULL) WITHOUT ROWID;
            CREATE TABLE events(
                seq INTEGER PRIMARY KEY AUTOINCREMENT, session TEXT NOT NULL, rev INTEGER NOT NULL,
                origin INTEGER NOT NULL, event TEXT NOT NULL, crc INTEGER NOT NULL);
            CREATE TABLE snapshots(
                session TEXT PRIMARY KEY, rev INTEGER NOT NULL, state TEXT NOT NULL,
                crc INTEGER NOT NULL) WITHOUT ROWID;
            CREATE TABLE answers(
                seq INTEGER PRIMARY KEY AUTOINCREMENT, session TEXT NOT NULL, key TEXT NOT NULL,
                fingerprint INTEGER NOT NULL, epoch INTEGER NOT NULL, rev INTEGER NOT NULL, state TEXT NOT NULL,
                crc INTEGER NOT NULL);
            CREATE INDEX answers_by_session ON answers(session, seq);
            CREATE TABLE meta(name TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
            CREATE TABLE deadlines(session TEXT PRIMARY KEY, at INTEGER NOT NULL) WITHOUT ROWID;
            CREATE TABLE settled(session TEXT PRIMARY KEY, rev INTEGER NOT NULL) WITHOUT ROWID;
            CREATE INDEX deadlines_by_time ON deadlines(at);
            PRAGMA user_version = 4;
            INSERT INTO sessions VALUES('\(id)', 'counter', 7, '{"count":0}', 1700000000, 0,
                \(RecordChecksum.of(id, 7, "counter", creation.state, "0")));
            \(rows.joined(separator: "\n"))
            INSERT INTO snapshots VALUES('\(id)', 2, '{"count":3}', \(RecordChecksum.of(id, 2, #"{"count":3}"#)));
            """
        )
    }
}
