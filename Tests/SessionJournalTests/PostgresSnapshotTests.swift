import PostgresFixture
import Testing

@testable import SessionJournal

/// `fh_snapshot` deletes only the events since the session's last cut (`fh_snapshots.cut`), so its cost does not grow
/// with the rows that earlier snapshots deleted and no vacuum has removed yet.
@Suite struct PostgresSnapshotTests {
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
}
