import Foundation
import Testing

@testable import SessionJournal

/// Token generations (`JournalRecord.tokens`, `--auth jwt`'s revocations) on both journals: read back with their
/// session (by an activation, by reading everything, after reopening), reset by a re-creation, gone with a removal,
/// failing closed when damaged, raised by the adoption of an older version's file; and, in a shared journal, written
/// by the session's owner only.
@Suite(.timeLimit(.minutes(2))) struct JournalTokenTests {
    @Test(arguments: JournalBackend.allCases)
    func aTokenGenerationIsReadBackWithItsSessionAndEndsWithIt(_ backend: JournalBackend) throws {
        let place = try JournalPlace(backend)
        defer { place.remove() }
        let (a, b, never) = (JournalFixtures.id(1), JournalFixtures.id(2), JournalFixtures.id(3))
        let journal = try place.open()
        try journal.appendAndWait([
            .created(JournalFixtures.creation(a)), .created(JournalFixtures.creation(b)),
            .created(JournalFixtures.creation(never)),
        ])
        try journal.appendAndWait([.tokens(sessionID: a, generation: 1), JournalFixtures.event(a, 1)])
        try journal.appendAndWait([.tokens(sessionID: a, generation: 2), .tokens(sessionID: b, generation: 5)])
        journal.close()

        let reopened = try place.open()
        defer { reopened.close() }
        #expect(try reopened.recover(only: [a]).first?.tokenGeneration == 2)
        let all = try reopened.recover()
        #expect(all.sessions.map(\.tokenGeneration) == [2, 5, 0])
        #expect(all.sessions.allSatisfy { $0.damage == nil })

        // A new incarnation of the id starts at generation 0; a re-anchored session journals its generation again
        // after its creation record, in the same append.
        try reopened.appendAndWait([.created(JournalFixtures.creation(b, epoch: 9))])
        #expect(try reopened.recover(only: [b]).first?.tokenGeneration == 0)
        try reopened.appendAndWait([
            .created(JournalFixtures.creation(a, epoch: 8)), .tokens(sessionID: a, generation: 2),
        ])
        #expect(try reopened.recover(only: [a]).first?.tokenGeneration == 2)

        // A removed session forgets its generation: created again, it starts at 0.
        try reopened.appendAndWait([.removed(sessionID: a)])
        _ = try reopened.compact()
        #expect(try reopened.recover(only: [a]).isEmpty)
        try reopened.appendAndWait([.created(JournalFixtures.creation(a, epoch: 10))])
        #expect(try reopened.recover(only: [a]).first?.tokenGeneration == 0)
    }

    /// A generation whose row fails its checksum is unknown: the session is read back damaged (so the service restores
    /// it under a new epoch, which ends every token minted for it), never at a lower generation.
    @Test(arguments: JournalBackend.allCases)
    func aDamagedTokenGenerationFailsClosed(_ backend: JournalBackend) throws {
        let place = try JournalPlace(backend)
        defer { place.remove() }
        let id = JournalFixtures.id(1)
        let journal = try place.open()
        defer { journal.close() }
        try journal.appendAndWait([
            .created(JournalFixtures.creation(id)), JournalFixtures.event(id, 1), .tokens(sessionID: id, generation: 3),
        ])
        try place.tamper(
            journal,
            sqlite: "UPDATE tokens SET generation = 1",
            postgres: "UPDATE fh_tokens SET generation = 1"
        )
        let session = try #require(try journal.recover(only: [id]).first)
        #expect(session.tokenGeneration == 0)
        #expect(session.damage?.contains("token generation fails its checksum") == true)
        #expect(session.events.map(\.revision) == [1])
    }

    /// The adoption of `token-revocations.json`: generations are raised for the sessions the journal holds, never
    /// lowered, and an id it does not hold is left out; adopting again changes nothing.
    @Test(arguments: JournalBackend.allCases)
    func adoptingRaisesGenerationsAndNeverLowersThem(_ backend: JournalBackend) throws {
        let place = try JournalPlace(backend)
        defer { place.remove() }
        let (revokedSince, older, unknown) = (JournalFixtures.id(1), JournalFixtures.id(2), JournalFixtures.id(3))
        let journal = try place.open()
        defer { journal.close() }
        try journal.appendAndWait([
            .created(JournalFixtures.creation(revokedSince)), .created(JournalFixtures.creation(older)),
            .tokens(sessionID: revokedSince, generation: 4),
        ])
        let file = [revokedSince: UInt64(2), older: 7, unknown: 9]
        #expect(try journal.adoptTokenGenerations(file) == [older])
        #expect(try journal.adoptTokenGenerations(file).isEmpty)
        let sessions = try journal.recover().sessions
        #expect(sessions.map(\.creation.id) == [revokedSince, older])
        #expect(sessions.map(\.tokenGeneration) == [4, 7])
        #expect(sessions.allSatisfy { $0.damage == nil })
    }

    /// In a shared journal only the session's owner writes its generation: a superseded owner's revocation is refused
    /// (`.fenced`) and writes nothing, and the owner's stands.
    @Test func aSupersededOwnersRevocationIsRefused() throws {
        let place = try JournalPlace(.postgres)
        let id = JournalFixtures.id(1)
        let first = try place.open()
        defer { first.close() }
        let second = try place.open()
        defer { second.close() }
        try first.appendAndWait([.created(JournalFixtures.creation(id)), .tokens(sessionID: id, generation: 1)])
        #expect(try second.recover(only: [id]).first?.tokenGeneration == 1)

        #expect(throws: JournalError.self) { try first.appendAndWait([.tokens(sessionID: id, generation: 2)]) }
        try second.appendAndWait([.tokens(sessionID: id, generation: 3)])
        // The first replica takes it back and reads the second's generation.
        #expect(try first.recover(only: [id]).first?.tokenGeneration == 3)
        #expect(throws: JournalError.self) { try second.appendAndWait([.tokens(sessionID: id, generation: 4)]) }
        #expect(try first.recover(only: [id]).first?.tokenGeneration == 3)
    }

    /// The adoption lets go of the sessions it raised in a shared journal: a replica holding one in memory is fenced
    /// at its next write, and reads the raised generation back.
    @Test func anAdoptionSupersedesAReplicaHoldingTheSession() throws {
        let place = try JournalPlace(.postgres)
        let id = JournalFixtures.id(1)
        let holder = try place.open()
        defer { holder.close() }
        try holder.appendAndWait([.created(JournalFixtures.creation(id))])
        let starting = try place.open()
        defer { starting.close() }
        #expect(try starting.adoptTokenGenerations([id: 2]) == [id])
        #expect(try holder.confirmsOwnership(of: id) == false)
        #expect(throws: JournalError.self) { try holder.appendAndWait([JournalFixtures.event(id, 1)]) }
        #expect(try holder.recover(only: [id]).first?.tokenGeneration == 2)
    }

    /// Schema version 7: a version 6 file (no `tokens`) gets the table when opened, keeps its sessions, and takes
    /// generations.
    @Test func aVersionSixFileGetsTheTokensTable() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let id = JournalFixtures.id(1)
        let journal = try JournalFixtures.open(directory)
        try journal.appendAndWait([.created(JournalFixtures.creation(id)), JournalFixtures.event(id, 1)])
        journal.close()
        // What version 6 wrote: everything but the tokens table.
        let connection = try SQLiteConnection(path: directory.file("journal.sqlite"))
        try connection.execute("DROP TABLE tokens; PRAGMA user_version = 6;")
        connection.close()

        let reopened = try JournalFixtures.open(directory)
        defer { reopened.close() }
        #expect(
            try reopened.withStore { store throws(JournalError) in try store.connection.integer("PRAGMA user_version") }
                == JournalSchema.version
        )
        let session = try #require(try reopened.recover().sessions.first)
        #expect(session.events.map(\.revision) == [1])
        #expect(session.tokenGeneration == 0)
        try reopened.appendAndWait([.tokens(sessionID: id, generation: 1)])
        #expect(try reopened.recover(only: [id]).first?.tokenGeneration == 1)
    }
}
