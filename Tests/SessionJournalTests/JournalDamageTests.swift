import Foundation
import Testing

@testable import SessionJournal

@Suite struct JournalDamageTests {
    /// What a crash leaves: the database file and a WAL that was not checkpointed. The copy is taken while
    /// the journal is open, after both commits completed.
    private static func crashCopy(of directory: TemporaryDirectory, to copy: TemporaryDirectory) throws {
        for name in ["journal.sqlite", "journal.sqlite-wal"] {
            try FileManager.default.copyItem(atPath: directory.file(name), toPath: copy.file(name))
        }
    }

    @Test func truncatedWALKeepsEveryCommitBeforeTheCut() throws {
        let directory = TemporaryDirectory()
        let copy = TemporaryDirectory()
        defer {
            directory.remove()
            copy.remove()
        }
        let id = JournalFixtures.id(1)
        let journal = try JournalFixtures.open(directory, JournalConfiguration(autoCheckpointPages: 0))
        try journal.appendAndWait(
            [.created(JournalFixtures.creation(id))] + (1...10).map { JournalFixtures.event(id, $0) }
        )
        try journal.appendAndWait((11...20).map { JournalFixtures.event(id, $0) })
        try Self.crashCopy(of: directory, to: copy)
        journal.close()

        let wal = copy.file("journal.sqlite-wal")
        let size = try #require(try FileManager.default.attributesOfItem(atPath: wal)[.size] as? Int)
        let handle = try #require(FileHandle(forWritingAtPath: wal))
        try handle.truncate(atOffset: UInt64(size - 100))  // cuts the last commit's final frame
        try handle.close()

        let reopened = try JournalFixtures.open(copy)
        defer { reopened.close() }
        let recovery = try reopened.recover()
        #expect(recovery.movedAside == nil)
        #expect(recovery.problems.isEmpty)
        #expect(recovery.sessions.first?.events.map(\.revision) == Array(1...10))
    }

    @Test func flippedByteInAnEventIsCaughtByItsChecksum() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let id = JournalFixtures.id(1)
        let other = JournalFixtures.id(2)
        let journal = try JournalFixtures.open(directory)
        try journal.appendAndWait(
            [.created(JournalFixtures.creation(id)), .created(JournalFixtures.creation(other))]
                + (1...5).map { JournalFixtures.event(id, $0) } + [JournalFixtures.event(other, 1)]
        )
        try journal.appendAndWait([.event(sessionID: id, revision: 6, event: #"{"marker":"flip-me"}"#, origin: .client)]
        )
        try journal.appendAndWait([JournalFixtures.event(id, 7)])
        journal.close()  // checkpoints everything into the database file

        let path = directory.file("journal.sqlite")
        let offset = try #require(try JournalFixtures.offset(of: "flip-me", in: path))
        try JournalFixtures.flipByte(at: offset + 2, in: path)

        let reopened = try JournalFixtures.open(directory)
        defer { reopened.close() }
        let recovery = try reopened.recover()
        #expect(recovery.movedAside == nil)  // SQLite's structure is intact; only the row's content changed
        let damaged = try #require(recovery.sessions.first { $0.creation.id == id })
        #expect(damaged.events.map(\.revision) == Array(1...5))
        #expect(damaged.damage?.contains("event 6 fails its checksum") == true)
        #expect(recovery.problems.contains { $0.contains(id) })
        let untouched = try #require(recovery.sessions.first { $0.creation.id == other })
        #expect(untouched.events.map(\.revision) == [1])
        #expect(untouched.damage == nil)
    }

    @Test func damagedPageMovesTheFileAsideAndSalvagesWhatStillReads() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let ids = (0..<200).map(JournalFixtures.id)
        let journal = try JournalFixtures.open(directory)
        for id in ids {
            try journal.appendAndWait(
                [.created(JournalFixtures.creation(id))]
                    + (1...5).map { revision in
                        .event(
                            sessionID: id,
                            revision: revision,
                            event: #"{"note":"\#(id)-\#(revision)-\#(String(repeating: "x", count: 100))"}"#,
                            origin: .client
                        )
                    }
            )
        }
        journal.close()

        // Wreck the header of the b-tree page holding one event in the middle of the table.
        let path = directory.file("journal.sqlite")
        let victim = ids[100]
        let offset = try #require(try JournalFixtures.offset(of: "\(victim)-3-", in: path))
        let pageStart = offset / 4096 * 4096
        for byte in 0..<8 {
            try JournalFixtures.flipByte(at: pageStart + byte, in: path)
        }

        let reopened = try JournalFixtures.open(directory)
        defer { reopened.close() }
        let recovery = try reopened.recover()
        let aside = try #require(recovery.movedAside)
        #expect(FileManager.default.fileExists(atPath: aside))
        #expect(recovery.problems.contains { $0.contains("failed SQLite's checks") })
        #expect(recovery.sessions.count == 200)
        let byID = Dictionary(uniqueKeysWithValues: recovery.sessions.map { ($0.creation.id, $0) })
        #expect(byID[ids[0]]?.events.count == 5)
        #expect(byID[ids[199]]?.events.count == 5)
        #expect(byID[victim]?.events.count ?? 5 < 5)
        // Whatever was recovered follows on from revision 0 without a gap.
        for session in recovery.sessions {
            #expect(session.events.enumerated().allSatisfy { $0.element.revision == UInt64($0.offset + 1) })
        }
        // The fresh journal takes new appends.
        try reopened.appendAndWait([JournalFixtures.event(ids[0], 6)])
    }

    @Test func fileThatIsNotADatabaseIsMovedAsideAndReplaced() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let journal = try JournalFixtures.open(directory)
        try journal.appendAndWait([.created(JournalFixtures.creation(JournalFixtures.id(1)))])
        journal.close()
        try JournalFixtures.flipByte(at: 0, in: directory.file("journal.sqlite"))  // "SQLite format 3" header

        let reopened = try JournalFixtures.open(directory)
        defer { reopened.close() }
        let recovery = try reopened.recover()
        #expect(recovery.movedAside != nil)
        #expect(recovery.sessions.isEmpty)
        try reopened.appendAndWait([.created(JournalFixtures.creation(JournalFixtures.id(2)))])
        #expect(try reopened.recover().sessions.count == 1)
    }
}
