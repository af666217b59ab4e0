import Foundation
import Testing

@testable import SessionJournal

@Suite("EventRows")
struct EventRowsTests {
    /// The texts are bound in place, so they must be unbound before the call returns: a statement that has stepped
    /// refuses bindings until it is reset (an earlier helper unbound first, and left every journaled event's two
    /// pointers bound to freed strings).
    @Test func textsBoundInPlaceAreUnboundOnceTheRowsAreWritten() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let connection = try SQLiteConnection(path: directory.file("t.sqlite"))
        defer { connection.close() }
        try connection.execute("CREATE TABLE t(a TEXT, n INTEGER, b TEXT)")
        let insert = try connection.prepare("INSERT INTO t(a, n, b) VALUES(?1, ?2, ?3)")
        defer { insert.finalize() }
        for n in 1...2 {
            let bytes = Array("first \(n)|second \(n)".utf8)
            insert.bind(2, Int64(n))
            try insert.run(bindingIn: bytes) { bind in
                bind(1, 0..<7)
                bind(3, 8..<bytes.count)
            }
            #expect(insert.expandedSQL == "INSERT INTO t(a, n, b) VALUES(NULL, NULL, NULL)")
        }
        let rows = try connection.texts("SELECT a || '/' || n || '/' || b FROM t ORDER BY n")
        #expect(rows == ["first 1/1/second 1", "first 2/2/second 2"])
    }

    @Test func aStatementOfRowsNumbersItsParametersRowByRow() {
        #expect(
            EventRows.insert(rows: 2)
                == "INSERT OR FAIL INTO events(session, rev, origin, event, crc, version, at, state_sum, feedback) VALUES"
                + "(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9), (?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18)"
        )
    }

    /// A statement that writes several rows and may stop half-way (a `NOT NULL` check coded to abort the statement)
    /// makes SQLite keep a statement journal, the pages it changes copied aside so that it can undo them alone; once
    /// one had spilled past 64 KiB into a temporary file (in five of six benchmark runs looked at), the later statements of
    /// rows wrote their pages there too: 0.44 more `pwrite` calls a post (session 24). A commit is undone
    /// whole (`ROLLBACK`) whatever fails in it, so the rows' statement fails instead of aborting and needs none. Read
    /// from SQLite's own program of the statement (`EXPLAIN`): every constraint check halts with `OR FAIL` (3), none
    /// with the default `ABORT` (2), on the journal's own table.
    @Test func aStatementOfRowsNeedsNoStatementJournal() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let journal = try JournalFixtures.open(directory, JournalConfiguration(compactionIntervalMilliseconds: 0))
        defer { journal.close() }
        let halts = try journal.withStore { store throws(JournalError) in
            let program = try store.connection.prepare("EXPLAIN " + EventRows.insert(rows: 16))
            defer { program.finalize() }
            var halts: [(opcode: String, onError: Int64)] = []
            while try program.step() {
                let opcode = program.text(1)
                if opcode == "Halt" || opcode == "HaltIfNull", program.int64(2) != 0 {
                    halts.append((opcode, program.int64(3)))
                }
            }
            return halts
        }
        #expect(halts.contains { $0.opcode == "HaltIfNull" })
        #expect(halts.allSatisfy { $0.onError == 3 }, "\(halts)")
    }

    /// A commit's runs of events go in chunks of 16, 4 and 1 rows, between the records of other kinds: every row
    /// lands, in the commit's order, with its own values (37 events in runs of 23 and 14 around a snapshot: chunks
    /// of every size, and the checksums recovery checks).
    @Test func aCommitsEventsLandInItsOrderWhateverTheChunks() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let ids = [JournalFixtures.id(1), JournalFixtures.id(2), JournalFixtures.id(3)]
        let journal = try JournalFixtures.open(directory, JournalConfiguration(compactionIntervalMilliseconds: 0))
        try journal.appendAndWait(ids.map { .created(JournalFixtures.creation($0)) })
        var records: [JournalRecord] = []
        var expected: [String] = []
        for number in 1...37 {
            let id = ids[number % 3]
            let revision = UInt64((number + 2) / 3)
            let stamp = EventStamp(version: 1, time: Int64(number), feedback: number % 5 == 0 ? "ticker" : nil)
            let event = number == 7 ? "{}" : #"{"type":"add","n":\#(number)}"#
            records.append(
                .event(sessionID: id, revision: revision, event: EventText(event), origin: .client, stamp: stamp)
            )
            expected.append("\(id) \(revision) \(event) \(number) \(number % 5 == 0 ? "ticker" : "-")")
            if number == 23 {
                records.append(.snapshot(sessionID: ids[0], revision: 0, state: #"{"count":0}"#))
            }
        }
        try journal.appendAndWait(records)
        let rows = try journal.withStore { store throws(JournalError) in
            try store.connection.texts(
                "SELECT session || ' ' || rev || ' ' || event || ' ' || at || ' ' || coalesce(feedback, '-') FROM events ORDER BY seq"
            )
        }
        #expect(rows == expected)
        journal.close()
        let reopened = try JournalFixtures.open(directory, JournalConfiguration(compactionIntervalMilliseconds: 0))
        defer { reopened.close() }
        let sessions = try reopened.recover().sessions
        #expect(sessions.allSatisfy { $0.damage == nil })
        #expect(sessions.map(\.events.count).reduce(0, +) == 37)
    }
}
