import Foundation
import Testing

@testable import SessionJournal

/// Compaction's row test as an SQL function (`CompactionCutoffs`): it deletes exactly the rows the test written in SQL
/// selects (kept history, latest snapshot, removed sessions, earlier incarnations), and a run sees the snapshots
/// committed since the last one.
@Suite struct CompactionCutoffsTests {
    /// The test as it was written in SQL before session 24: the rows of [?1, ?2) that compaction may delete.
    static let selectedInSQL = """
        SELECT seq FROM events WHERE seq >= ?1 AND seq < ?2 AND (
            NOT EXISTS (SELECT 1 FROM sessions s WHERE s.id = events.session AND s.generation < events.seq)
            OR rev <= coalesce(
                (SELECT min(h.rev) FROM history h WHERE h.session = events.session),
                (SELECT n.rev FROM snapshots n WHERE n.session = events.session), -1))
        ORDER BY seq
        """

    private static func event(_ id: String, _ revision: UInt64) -> JournalRecord {
        .event(
            sessionID: id,
            revision: revision,
            event: #"{"type":"add","n":\#(revision)}"#,
            origin: .client,
            stamp: EventStamp(version: 1, time: Int64(revision))
        )
    }

    /// Two sessions with snapshots, one removed and one created again, their events interleaved, then a newer
    /// snapshot between two runs; kept history of two snapshots (the cutoff is the oldest kept) or none (the latest).
    @Test(arguments: [2, 0])
    func theFunctionDeletesWhatTheSQLTestSelected(keeping snapshots: Int) throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let journal = try JournalFixtures.open(
            directory,
            JournalConfiguration(compactionIntervalMilliseconds: 0).keepingHistory(snapshots)
        )
        defer { journal.close() }
        let (kept, latest, removed, again) = (
            JournalFixtures.id(21), JournalFixtures.id(22), JournalFixtures.id(23), JournalFixtures.id(24)
        )
        let ids = [kept, latest, removed, again]
        try journal.appendAndWait(ids.map { .created(JournalFixtures.creation($0)) })
        for revision in UInt64(1)...60 {
            var records = ids.map { Self.event($0, revision) }
            if revision % 20 == 0 {
                records.append(.snapshot(sessionID: kept, revision: revision, state: #"{"at":\#(revision)}"#))
                records.append(.snapshot(sessionID: latest, revision: revision, state: #"{"at":\#(revision)}"#))
            }
            try journal.appendAndWait(records)
        }
        try journal.appendAndWait([.removed(sessionID: removed), .created(JournalFixtures.creation(again))])
        try journal.appendAndWait((UInt64(1)...5).map { Self.event(again, $0) })

        try journal.withStore { store throws(JournalError) in
            let end = try store.lastLogSeq() + 1
            let before = try Self.remaining(store)
            let expected = try Self.selected(store, before: end)
            #expect(expected.count > 100)  // every kind above has rows to delete
            #expect(try store.compactEvents(from: 0, before: end) == expected.count)
            #expect(try Self.remaining(store) == before.subtracting(expected))
        }
        // A snapshot committed since covers more: the next run reads the cutoffs again.
        try journal.appendAndWait([
            Self.event(kept, 61), .snapshot(sessionID: kept, revision: 61, state: #"{"at":61}"#),
        ])
        try journal.withStore { store throws(JournalError) in
            let end = try store.lastLogSeq() + 1
            let expected = try Self.selected(store, before: end)
            #expect(!expected.isEmpty)
            #expect(try store.compactEvents(from: 0, before: end) == expected.count)
            #expect(try Self.selected(store, before: end).isEmpty)
        }
    }

    /// Enough sessions in one run for the function's table to grow several times (64 slots at first, at most half
    /// full), each with its own cutoff: it still deletes exactly what the SQL test selects.
    @Test func manySessionsInOneRunKeepTheirOwnCutoffs() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let journal = try JournalFixtures.open(directory, JournalConfiguration(compactionIntervalMilliseconds: 0))
        defer { journal.close() }
        let ids = (1...300).map { JournalFixtures.id($0) }
        try journal.appendAndWait(ids.map { .created(JournalFixtures.creation($0)) })
        for revision in UInt64(1)...4 {
            var records = ids.map { Self.event($0, revision) }
            for (index, id) in ids.enumerated() where index % 5 == Int(revision) {
                records.append(.snapshot(sessionID: id, revision: revision, state: #"{"at":\#(revision)}"#))
            }
            try journal.appendAndWait(records)
        }
        try journal.withStore { store throws(JournalError) in
            let end = try store.lastLogSeq() + 1
            let before = try Self.remaining(store)
            let expected = try Self.selected(store, before: end)
            // Sessions snapshotted at 1 to 4 lose that many events; those never snapshotted (a fifth) lose none.
            #expect(expected.count == 60 * (1 + 2 + 3 + 4))
            #expect(try store.compactEvents(from: 0, before: end) == expected.count)
            #expect(try Self.remaining(store) == before.subtracting(expected))
        }
    }

    private static func selected(_ store: JournalStore, before end: Int64) throws(JournalError) -> [Int64] {
        let select = try store.connection.prepare(Self.selectedInSQL)
        defer { select.finalize() }
        select.bind(1, Int64(0))
        select.bind(2, end)
        var rows: [Int64] = []
        while try select.step() { rows.append(select.int64(0)) }
        return rows
    }

    private static func remaining(_ store: JournalStore) throws(JournalError) -> Set<Int64> {
        Set(try store.connection.texts("SELECT seq FROM events").compactMap { Int64($0) })
    }
}
