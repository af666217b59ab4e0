import Foundation
import Testing

@testable import SessionJournal

/// The keyed answers (`JournalRecord.answered`): journaled with their events, read back with their session,
/// trimmed per session, gone with their session; and the fingerprint key they are compared with.
@Suite struct KeyedAnswerTests {
    private static func answer(_ id: String, _ key: String, revision: UInt64, fingerprint: UInt64 = 42) -> KeyedAnswer {
        KeyedAnswer(
            sessionID: id,
            key: key,
            fingerprint: fingerprint,
            epoch: 7,
            revision: revision,
            state: #"{"count":\#(revision)}"#
        )
    }

    private static func answerRows(_ journal: Journal, _ id: String? = nil) throws -> Int64 {
        try journal.withStore { store throws(JournalError) in
            try store.connection.integer(
                "SELECT count(*) FROM answers" + (id.map { " WHERE session = '\($0)'" } ?? "")
            )
        }
    }

    @Test func answersAreRecoveredWithTheirSessionOldestFirst() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let a = JournalFixtures.id(1)
        let b = JournalFixtures.id(2)
        let journal = try JournalFixtures.open(directory)
        try journal.appendAndWait([.created(JournalFixtures.creation(a)), .created(JournalFixtures.creation(b))])
        try journal.appendAndWait([JournalFixtures.event(a, 1), .answered(Self.answer(a, "k1", revision: 1))])
        try journal.appendAndWait([
            JournalFixtures.event(a, 2), JournalFixtures.event(a, 3), .answered(Self.answer(a, "k2", revision: 3)),
            JournalFixtures.event(b, 1), .answered(Self.answer(b, "k1", revision: 1, fingerprint: .max)),
        ])
        journal.close()

        let reopened = try JournalFixtures.open(directory)
        defer { reopened.close() }
        let recovery = try reopened.recover()
        #expect(recovery.problems.isEmpty)
        #expect(recovery.sessions[0].answers == [Self.answer(a, "k1", revision: 1), Self.answer(a, "k2", revision: 3)])
        #expect(recovery.sessions[1].answers == [Self.answer(b, "k1", revision: 1, fingerprint: .max)])
    }

    @Test func answersGoWithARemovedOrRecreatedSession() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let journal = try JournalFixtures.open(directory)
        defer { journal.close() }
        let gone = JournalFixtures.id(1)
        let again = JournalFixtures.id(2)
        for id in [gone, again] {
            try journal.appendAndWait([
                .created(JournalFixtures.creation(id)), JournalFixtures.event(id, 1),
                .answered(Self.answer(id, "k", revision: 1)),
            ])
        }
        try journal.appendAndWait([.removed(sessionID: gone), .created(JournalFixtures.creation(again, epoch: 8))])
        #expect(try Self.answerRows(journal) == 0)
        #expect(try journal.recover().sessions.map(\.answers) == [[]])
    }

    @Test func onlyTheLastAnswersOfASessionAreKept() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let journal = try JournalFixtures.open(directory, JournalConfiguration(answersPerSession: 3))
        defer { journal.close() }
        let id = JournalFixtures.id(1)
        try journal.appendAndWait([.created(JournalFixtures.creation(id))])
        for revision in UInt64(1)...20 {
            try journal.appendAndWait([
                JournalFixtures.event(id, revision), .answered(Self.answer(id, "k\(revision)", revision: revision)),
            ])
            // Trimmed as they come: never more than twice the number kept.
            #expect(try Self.answerRows(journal) <= 6)
        }
        #expect(try journal.recover().sessions[0].answers.map(\.key) == ["k18", "k19", "k20"])
        // Rows a salvage or an older build could leave: another session's orphans.
        try journal.withStore { store throws(JournalError) in
            try store.connection.execute(
                "INSERT INTO answers(session, key, fingerprint, epoch, rev, state, crc) VALUES('x', 'k', 1, 1, 1, '{}', 0)"
            )
        }
        let report = try journal.compact()
        #expect(try Self.answerRows(journal) == 3)
        #expect(report.deletedAnswers >= 1)
        #expect(try journal.recover().sessions[0].answers.map(\.key) == ["k18", "k19", "k20"])
    }

    @Test func answerPastTheRecoveredRevisionOrFailingItsChecksumIsDropped() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let journal = try JournalFixtures.open(directory)
        defer { journal.close() }
        let id = JournalFixtures.id(1)
        try journal.appendAndWait([
            .created(JournalFixtures.creation(id)), JournalFixtures.event(id, 1),
            .answered(Self.answer(id, "good", revision: 1)),
            .answered(Self.answer(id, "changed", revision: 1)),
            // Its events were lost (here: never written): replaying it would claim what the state lacks.
            .answered(Self.answer(id, "lost", revision: 2)),
        ])
        try journal.withStore { store throws(JournalError) in
            try store.connection.execute(#"UPDATE answers SET state = '{"count":9}' WHERE key = 'changed'"#)
        }
        let recovery = try journal.recover()
        #expect(recovery.sessions[0].answers.map(\.key) == ["good"])
        #expect(recovery.problems.contains { $0.contains("fail their checksum") })
    }

    @Test func fingerprintKeyIsMadeOnceAndKeptInTheFile() throws {
        let directory = TemporaryDirectory()
        let other = TemporaryDirectory()
        defer {
            directory.remove()
            other.remove()
        }
        let journal = try JournalFixtures.open(directory)
        let key = journal.fingerprintKey
        journal.close()
        #expect(key.count == 16)
        let reopened = try JournalFixtures.open(directory)
        #expect(reopened.fingerprintKey == key)
        reopened.close()
        let fresh = try JournalFixtures.open(other)
        #expect(fresh.fingerprintKey != key)
        fresh.close()
    }

    @Test func fileOfVersionTwoOpensRestoresAndTakesAnswers() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let id = JournalFixtures.id(1)
        try Self.writeVersionTwoFile(directory.file("journal.sqlite"), id: id)

        let journal = try JournalFixtures.open(directory)
        let recovery = try journal.recover()
        #expect(recovery.problems.isEmpty)
        #expect(recovery.movedAside == nil)
        let session = try #require(recovery.sessions.first)
        #expect(session.creation == JournalFixtures.creation(id))
        #expect(session.baseRevision == 2)
        #expect(session.events.map(\.revision) == [3])
        #expect(session.answers.isEmpty)
        #expect(
            try journal.withStore { store throws(JournalError) in try store.connection.integer("PRAGMA user_version") }
                == JournalSchema.version
        )
        try journal.appendAndWait([JournalFixtures.event(id, 4), .answered(Self.answer(id, "k", revision: 4))])
        let key = journal.fingerprintKey
        journal.close()

        let reopened = try JournalFixtures.open(directory)
        defer { reopened.close() }
        #expect(reopened.fingerprintKey == key)
        let again = try #require(try reopened.recover().sessions.first)
        #expect(again.events.map(\.revision) == [3, 4])
        #expect(again.answers == [Self.answer(id, "k", revision: 4)])
    }

    @Test func fileOfAnUnknownVersionIsRefused() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let connection = try SQLiteConnection(path: directory.file("journal.sqlite"))
        try connection.execute("CREATE TABLE t(x); PRAGMA user_version = 9;")
        connection.close()
        #expect(throws: JournalError.self) { try JournalFixtures.open(directory).close() }
    }

    /// The schema and rows exactly as the journal wrote them before keyed answers (schema version 2): a session,
    /// events 1 to 3 and a snapshot at revision 2.
    private static func writeVersionTwoFile(_ path: String, id: String) throws {
        let connection = try SQLiteConnection(path: path)
        defer { connection.close() }
        let creation = JournalFixtures.creation(id)
        let event = #"{"type":"add","n":3}"#
        try connection.execute(
            """
            PRAGMA journal_mode = WAL;
            CREATE TABLE IF NOT EXISTS sessions(
                id TEXT PRIMARY KEY, system TEXT NOT NULL, epoch INTEGER NOT NULL, state TEXT NOT NULL,
                created REAL NOT NULL, generation INTEGER NOT NULL, crc INTEGER NOT NULL) WITHOUT ROWID;
            CREATE TABLE IF NOT EXISTS events(
                seq INTEGER PRIMARY KEY AUTOINCREMENT, session TEXT NOT NULL, rev INTEGER NOT NULL,
                origin INTEGER NOT NULL, event TEXT NOT NULL, crc INTEGER NOT NULL);
            CREATE TABLE IF NOT EXISTS snapshots(
                session TEXT PRIMARY KEY, rev INTEGER NOT NULL, state TEXT NOT NULL, crc INTEGER NOT NULL) WITHOUT ROWID;
            PRAGMA user_version = 2;
            INSERT INTO sessions VALUES('\(id)', 'counter', 7, '{"count":0}', 1700000000, 0,
                \(RecordChecksum.creation(creation, generation: 0)));
            INSERT INTO events(session, rev, origin, event, crc) VALUES('\(id)', 1, 0, '{}', 0);
            INSERT INTO events(session, rev, origin, event, crc) VALUES('\(id)', 2, 0, '{}', 0);
            INSERT INTO events(session, rev, origin, event, crc) VALUES('\(id)', 3, 0, '\(event)',
                \(RecordChecksum.of(id, RecordChecksum.eventNumber(3, 0), event)));
            INSERT INTO snapshots VALUES('\(id)', 2, '{"count":3}', \(RecordChecksum.of(id, 2, #"{"count":3}"#)));
            """
        )
    }
}
