import Dispatch
import PostgresFixture
import Testing

@testable import SessionJournal
@testable import SessionJournalPostgres

/// What the PostgreSQL journal deletes as it writes, at a cost that does not grow with the rows deleted before: a
/// snapshot's events since the session's last cut (`fh_snapshots.cut`), and keyed answers once a session has twice
/// `answersPerSession`.
@Suite struct PostgresTrimTests {
    @Test func aSnapshotDeletesTheEventsSinceTheLastCutAndARowWithoutACutFromTheStart() throws {
        let place = try JournalPlace(.postgres)
        let journal = try place.open()
        defer { journal.close() }
        let id = JournalFixtures.id(1)
        let sql = { (statement: String) in try PostgresServer.shared().psql(place.url!, statement) }
        try journal.appendAndWait(
            [.created(JournalFixtures.creation(id))] + (1...4).map { JournalFixtures.event(id, $0) }
        )
        try journal.appendAndWait([.snapshot(sessionID: id, revision: 2, state: #"{"count":2}"#)])
        #expect(try sql("SELECT cut FROM fh_snapshots") == "2\n")
        #expect(try sql("SELECT string_agg(rev::text, ',' ORDER BY rev) FROM fh_events") == "3,4\n")

        // A row below the cut is not the snapshot's to delete (it never is, since the cut only grows; compaction
        // would): the next snapshot deletes from the cut on.
        try journal.appendAndWait((5...6).map { JournalFixtures.event(id, $0) })
        _ = try sql("INSERT INTO fh_events(session, rev, origin, event, crc) VALUES('\(id)', 1, 0, '{}', 0)")
        try journal.appendAndWait([.snapshot(sessionID: id, revision: 5, state: #"{"count":5}"#)])
        #expect(try sql("SELECT cut FROM fh_snapshots") == "5\n")
        #expect(try sql("SELECT string_agg(rev::text, ',' ORDER BY rev) FROM fh_events") == "1,6\n")

        // A snapshot row written before the cut existed (NULL) is cut from the session's first event.
        _ = try sql("UPDATE fh_snapshots SET cut = NULL")
        try journal.appendAndWait([JournalFixtures.event(id, 7), .snapshot(sessionID: id, revision: 7, state: "{}")])
        #expect(try sql("SELECT cut FROM fh_snapshots") == "7\n")
        #expect(try sql("SELECT count(*) FROM fh_events") == "0\n")
        let session = try #require(try journal.recover(only: [id]).first)
        #expect(session.baseRevision == 7)
        #expect(session.events.isEmpty)
    }

    @Test func aSessionsAnswersAreTrimmedToTheNewestOnceItHasTwiceAsMany() throws {
        let place = try JournalPlace(.postgres)
        let journal = try place.open(JournalConfiguration(answersPerSession: 3))
        defer { journal.close() }
        let id = JournalFixtures.id(1)
        let keys = {
            try PostgresServer.shared().psql(place.url!, "SELECT string_agg(key, ',' ORDER BY seq) FROM fh_answers")
        }
        try journal.appendAndWait([.created(JournalFixtures.creation(id))])
        for revision in UInt64(1)...8 {
            try journal.appendAndWait([JournalFixtures.event(id, revision), Self.answer(id, revision)])
            if revision == 5 { #expect(try keys() == "k1,k2,k3,k4,k5\n") }
        }
        #expect(try keys() == "k4,k5,k6,k7,k8\n")  // trimmed to 3 at the sixth, then two more
        _ = try journal.compact()
        #expect(try keys() == "k6,k7,k8\n")
        let session = try #require(try journal.recover(only: [id]).first)
        #expect(session.answers.map(\.key) == ["k6", "k7", "k8"])
    }

    /// Session `id`'s keyed answer at `revision`, under the key `k<revision>`.
    private static func answer(_ id: String, _ revision: UInt64) -> JournalRecord {
        .answered(
            KeyedAnswer(sessionID: id, key: "k\(revision)", fingerprint: 1, epoch: 7, revision: revision, state: "{}")
        )
    }

    /// The journal counts each session's answers for their trimming; a session another replica took over is counted
    /// no more (no entry is left behind for every session that moved away during the process's life).
    @Test func aSessionTakenOverLeavesNoAnswerCountBehind() throws {
        let place = try JournalPlace(.postgres)
        let holder = try PostgresJournal.open(url: place.url!, logger: JournalFixtures.logger)
        defer { holder.close() }
        let other = try PostgresJournal.open(url: place.url!, logger: JournalFixtures.logger)
        defer { other.close() }
        let id = JournalFixtures.id(1)
        try holder.appendAndWait([
            .created(JournalFixtures.creation(id)), JournalFixtures.event(id, 1), Self.answer(id, 1),
        ])
        #expect(holder.queue.sync { holder.answerCounts[id] } == 1)
        #expect(try other.recover(only: [id]).count == 1)  // taken over
        #expect(throws: JournalError.self) {
            try holder.appendAndWait([JournalFixtures.event(id, 2), Self.answer(id, 2)])
        }
        #expect(holder.queue.sync { holder.answerCounts[id] } == nil)
    }
}
