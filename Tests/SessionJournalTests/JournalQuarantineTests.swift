import Foundation
import Testing

@testable import SessionJournal

/// Quarantine (issue 31) on both journals: written and read on the journal's queue, kept across passivation and
/// restarts, ended by a release, a removal, a re-creation of the id, a retention and compaction of a session gone; in a
/// shared journal, read by every replica and taking the session from the one holding it; and a version 7 SQLite file
/// migrated to the table.
@Suite(.timeLimit(.minutes(2))) struct JournalQuarantineTests {
    @Test(arguments: JournalBackend.allCases)
    func aQuarantineOutlivesPassivationAndARestartUntilReleased(_ backend: JournalBackend) throws {
        let place = try JournalPlace(backend)
        defer { place.remove() }
        let (a, b, c) = (JournalFixtures.id(1), JournalFixtures.id(2), JournalFixtures.id(3))
        let journal = try place.open()
        try journal.appendAndWait([
            .created(JournalFixtures.creation(a)), .created(JournalFixtures.creation(b)),
            .created(JournalFixtures.creation(c)), JournalFixtures.event(a, 1),
        ])
        // Passivated (a snapshot and the settled mark), as a session is after the restart that quarantines it.
        try journal.appendAndWait([
            .snapshot(sessionID: a, revision: 1, state: #"{"count":1}"#), .settled(sessionID: a, revision: 1),
        ])
        #expect(try journal.quarantine(of: a) == nil)
        #expect(try journal.quarantined(limit: 10).isEmpty)
        try journal.quarantine(b, reason: "The process died in b's reducer on event tick.", at: 1_700_000_000_300)
        try journal.quarantine(a, reason: "The process died in a's reducer on event add.", at: 1_700_000_000_100)
        // A later quarantine of the same session replaces the earlier one.
        try journal.quarantine(a, reason: "The process died in a's activation.", at: 1_700_000_000_200)
        journal.close()

        let reopened = try place.open()
        defer { reopened.close() }
        let expected = Quarantine(
            sessionID: a,
            reason: "The process died in a's activation.",
            at: 1_700_000_000_200,
            replica: Quarantine.hostName
        )
        #expect(try reopened.quarantine(of: a) == expected)
        #expect(try reopened.quarantine(of: c) == nil)
        #expect(try reopened.quarantined(limit: 10).map(\.sessionID) == [a, b])
        #expect(try reopened.quarantined(limit: 1) == [expected])
        // The session itself reads back as it was.
        #expect(try reopened.recover(only: [a]).first?.revision == 1)

        #expect(try reopened.releaseQuarantine(a))
        #expect(try !reopened.releaseQuarantine(a))
        #expect(try !reopened.releaseQuarantine(c))
        #expect(try reopened.quarantine(of: a) == nil)
        #expect(try reopened.quarantined(limit: 10).map(\.sessionID) == [b])
    }

    /// What forgets a session forgets its quarantine: its removal, a creation record of its id (a new incarnation),
    /// its retention, and compaction for one the journal does not hold.
    @Test(arguments: JournalBackend.allCases)
    func forgettingASessionEndsItsQuarantine(_ backend: JournalBackend) throws {
        let place = try JournalPlace(backend)
        defer { place.remove() }
        let (removed, recreated, retired, kept, unknown) = (
            JournalFixtures.id(1), JournalFixtures.id(2), JournalFixtures.id(3), JournalFixtures.id(4),
            JournalFixtures.id(5)
        )
        let journal = try place.open()
        defer { journal.close() }
        try journal.appendAndWait(
            [removed, recreated, retired, kept].map { .created(JournalFixtures.creation($0)) }
                + [.settled(sessionID: retired, revision: 0)]
        )
        for id in [removed, recreated, retired, kept, unknown] {
            try journal.quarantine(id, reason: "The process died in \(id)'s reducer.", at: 1_700_000_000_000)
        }
        try journal.appendAndWait([.removed(sessionID: removed)])
        try journal.appendAndWait([.created(JournalFixtures.creation(recreated, epoch: 9))])
        try journal.touchActivity(of: [retired], at: 1_000)
        #expect(try journal.retire([retired], leftBefore: 2_000) == [retired])
        #expect(try journal.quarantined(limit: 10).map(\.sessionID) == [kept, unknown])

        _ = try journal.compact()
        #expect(try journal.quarantined(limit: 10).map(\.sessionID) == [kept])
        #expect(try journal.quarantine(of: unknown) == nil)
    }

    /// One replica's quarantine is every replica's: a second journal on the database reads it, and the replica that
    /// held the session in memory is fenced at its next write, since the quarantine let the session go.
    @Test func aQuarantineIsReadByAnotherReplicaAndSupersedesTheHolder() throws {
        let place = try JournalPlace(.postgres)
        let id = JournalFixtures.id(1)
        let holder = try place.open()
        defer { holder.close() }
        try holder.appendAndWait([.created(JournalFixtures.creation(id)), JournalFixtures.event(id, 1)])
        #expect(try holder.confirmsOwnership(of: id))

        let starting = try place.open()
        defer { starting.close() }
        try starting.quarantine(id, reason: "The process died in the reducer on event add.", at: 1_700_000_000_000)
        #expect(try holder.quarantine(of: id)?.reason == "The process died in the reducer on event add.")
        #expect(try holder.quarantined(limit: 10).map(\.sessionID) == [id])
        #expect(try holder.confirmsOwnership(of: id) == false)
        #expect(throws: JournalError.self) { try holder.appendAndWait([JournalFixtures.event(id, 2)]) }
        // Nothing of the session was lost, and a third replica sees the release of the second.
        #expect(try holder.recover(only: [id]).first?.revision == 1)
        #expect(try starting.releaseQuarantine(id))
        let third = try place.open()
        defer { third.close() }
        #expect(try third.quarantine(of: id) == nil)
    }

    /// A quarantine of this replica's own session lets it go too: its next write is refused, and it reads the session
    /// back (a shared journal), as any replica would.
    @Test func quarantiningAnOwnSessionLetsItGo() throws {
        let place = try JournalPlace(.postgres)
        let id = JournalFixtures.id(1)
        let journal = try place.open()
        defer { journal.close() }
        try journal.appendAndWait([.created(JournalFixtures.creation(id))])
        try journal.quarantine(id, reason: "The process died in the activation.", at: 1)
        #expect(try journal.confirmsOwnership(of: id) == false)
        #expect(throws: JournalError.self) { try journal.appendAndWait([JournalFixtures.event(id, 1)]) }
        #expect(try journal.recover(only: [id]).first?.revision == 0)
        try journal.appendAndWait([JournalFixtures.event(id, 1)])
        #expect(try journal.quarantine(of: id) != nil)
    }

    /// Schema version 8: a version 7 file (no `quarantine`) gets the table when opened, keeps its sessions, and takes
    /// quarantines.
    @Test func aVersionSevenFileGetsTheQuarantineTable() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let id = JournalFixtures.id(1)
        let journal = try JournalFixtures.open(directory)
        try journal.appendAndWait([
            .created(JournalFixtures.creation(id)), JournalFixtures.event(id, 1), .tokens(sessionID: id, generation: 2),
        ])
        journal.close()
        // What version 7 wrote: everything but the quarantine table.
        let connection = try SQLiteConnection(path: directory.file("journal.sqlite"))
        try connection.execute("DROP TABLE quarantine; PRAGMA user_version = 7;")
        connection.close()

        let reopened = try JournalFixtures.open(directory)
        defer { reopened.close() }
        #expect(
            try reopened.withStore { store throws(JournalError) in try store.connection.integer("PRAGMA user_version") }
                == JournalSchema.version
        )
        let session = try #require(try reopened.recover().sessions.first)
        #expect(session.events.map(\.revision) == [1])
        #expect(session.tokenGeneration == 2)
        #expect(try reopened.quarantined(limit: 10).isEmpty)
        try reopened.quarantine(id, reason: "The process died in the reducer.", at: 5)
        #expect(try reopened.quarantine(of: id)?.at == 5)
    }

    /// A closed journal refuses quarantine calls with `.closed`.
    @Test(arguments: JournalBackend.allCases)
    func aClosedJournalRefusesQuarantineCalls(_ backend: JournalBackend) throws {
        let place = try JournalPlace(backend)
        defer { place.remove() }
        let journal = try place.open()
        journal.close()
        #expect(throws: JournalError.self) { try journal.quarantine(JournalFixtures.id(1), reason: "r", at: 1) }
        #expect(throws: JournalError.self) { try journal.quarantined(limit: 1) }
    }
}
