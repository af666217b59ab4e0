import Testing

@testable import SessionJournal

/// Each client's last numbered post (`JournalRecord.sequenced`, issue 34), against both journals: one row per
/// (session, client), replaced by the next post, read back with its session, gone with it.
@Suite(.timeLimit(.minutes(2))) struct ClientSequenceTests {
    private static func sequence(
        _ id: String,
        _ client: String,
        _ sequence: UInt64,
        revision: UInt64,
        status: Int = 200
    ) -> ClientSequence {
        ClientSequence(
            sessionID: id,
            client: client,
            sequence: sequence,
            epoch: 7,
            revision: revision,
            status: status,
            answer: status == 200 ? #"{"rev":\#(revision)}"# : #"{"status":\#(status)}"#
        )
    }

    /// Starts a reopened journal and reads every session back, expecting no problem.
    private static func recoverAfterStart(
        _ journal: any SessionJournaling,
        sourceLocation: SourceLocation = #_sourceLocation
    ) throws -> JournalRecovery {
        _ = try journal.start()
        let recovery = try journal.recover()
        #expect(recovery.problems.isEmpty, sourceLocation: sourceLocation)
        return recovery
    }

    @Test(arguments: JournalBackend.allCases)
    func theLastSequenceOfEachClientIsReadBackWithItsSession(_ backend: JournalBackend) throws {
        let place = try JournalPlace(backend)
        defer { place.remove() }
        let (a, b) = (JournalFixtures.id(1), JournalFixtures.id(2))
        let journal = try place.open()
        try journal.appendAndWait([.created(JournalFixtures.creation(a)), .created(JournalFixtures.creation(b))])
        try journal.appendAndWait([JournalFixtures.event(a, 1), .sequenced(Self.sequence(a, "phone", 1, revision: 1))])
        try journal.appendAndWait([JournalFixtures.event(a, 2), .sequenced(Self.sequence(a, "phone", 2, revision: 2))])
        try journal.appendAndWait([.sequenced(Self.sequence(a, "tablet", 1, revision: 2, status: 422))])
        try journal.appendAndWait([JournalFixtures.event(b, 1), .sequenced(Self.sequence(b, "phone", 9, revision: 1))])
        journal.close()

        let reopened = try place.open()
        defer { reopened.close() }
        let recovery = try Self.recoverAfterStart(reopened)
        let clients = recovery.sessions[0].clients.sorted { $0.client < $1.client }
        #expect(
            clients == [
                Self.sequence(a, "phone", 2, revision: 2), Self.sequence(a, "tablet", 1, revision: 2, status: 422),
            ]
        )
        #expect(recovery.sessions[1].clients == [Self.sequence(b, "phone", 9, revision: 1)])
        let one = try reopened.recover(only: [a])
        #expect(one.first?.clients.sorted { $0.client < $1.client } == clients)
    }

    @Test(arguments: JournalBackend.allCases)
    func aRemovalOrARecreationForgetsTheClients(_ backend: JournalBackend) throws {
        let place = try JournalPlace(backend)
        defer { place.remove() }
        let (a, b) = (JournalFixtures.id(1), JournalFixtures.id(2))
        let journal = try place.open()
        defer { journal.close() }
        try journal.appendAndWait([.created(JournalFixtures.creation(a)), .created(JournalFixtures.creation(b))])
        try journal.appendAndWait([
            JournalFixtures.event(a, 1), .sequenced(Self.sequence(a, "phone", 1, revision: 1)),
            JournalFixtures.event(b, 1), .sequenced(Self.sequence(b, "phone", 1, revision: 1)),
        ])
        try journal.appendAndWait([.removed(sessionID: a), .created(JournalFixtures.creation(b))])
        let recovery = try journal.recover(only: [a, b])
        #expect(recovery.map(\.creation.id) == [b])
        #expect(recovery.first?.clients == [])
    }

    @Test(arguments: JournalBackend.allCases)
    func aForgottenClientsRowGoesAndTheOthersStay(_ backend: JournalBackend) throws {
        let place = try JournalPlace(backend)
        defer { place.remove() }
        let (a, b) = (JournalFixtures.id(1), JournalFixtures.id(2))
        let journal = try place.open()
        try journal.appendAndWait([.created(JournalFixtures.creation(a)), .created(JournalFixtures.creation(b))])
        try journal.appendAndWait([
            JournalFixtures.event(a, 1), .sequenced(Self.sequence(a, "phone", 1, revision: 1)),
            JournalFixtures.event(a, 2), .sequenced(Self.sequence(a, "tablet", 1, revision: 2)),
            JournalFixtures.event(b, 1), .sequenced(Self.sequence(b, "phone", 1, revision: 1)),
        ])
        try journal.appendAndWait([.clientForgotten(sessionID: a, client: "phone")])
        // Forgotten, then back at number 1: the new row stays.
        try journal.appendAndWait([.clientForgotten(sessionID: a, client: "tablet")])
        try journal.appendAndWait([JournalFixtures.event(a, 3), .sequenced(Self.sequence(a, "tablet", 1, revision: 3))])
        journal.close()

        let reopened = try place.open()
        defer { reopened.close() }
        let recovery = try Self.recoverAfterStart(reopened)
        #expect(recovery.sessions[0].clients == [Self.sequence(a, "tablet", 1, revision: 3)])
        #expect(recovery.sessions[1].clients == [Self.sequence(b, "phone", 1, revision: 1)])
    }

    /// Schema version 9: a version 8 file (no `clients`) gets the table when opened and keeps its sessions.
    @Test func aVersionEightFileGetsTheClientsTable() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let id = JournalFixtures.id(1)
        let journal = try JournalFixtures.open(directory)
        try journal.appendAndWait([.created(JournalFixtures.creation(id)), JournalFixtures.event(id, 1)])
        journal.close()
        let connection = try SQLiteConnection(path: directory.file("journal.sqlite"))
        try connection.execute("DROP TABLE clients; PRAGMA user_version = 8;")
        connection.close()

        let reopened = try JournalFixtures.open(directory)
        defer { reopened.close() }
        #expect(
            try reopened.withStore { store throws(JournalError) in try store.connection.integer("PRAGMA user_version") }
                == 9
        )
        try reopened.appendAndWait([
            JournalFixtures.event(id, 2), .sequenced(Self.sequence(id, "phone", 1, revision: 2)),
        ])
        let session = try #require(try reopened.recover().sessions.first)
        #expect(session.events.map(\.revision) == [1, 2])
        #expect(session.clients == [Self.sequence(id, "phone", 1, revision: 2)])
    }
}
