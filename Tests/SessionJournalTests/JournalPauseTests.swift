import Foundation
import Testing

@testable import SessionJournal

/// A fork's paused effects (`JournalRecord.paused`, issue 32) on both journals: read back with the session (by an
/// activation, by reading everything, after reopening), hidden from the deadline queries while it lasts, ended by a
/// resume, a re-creation of the id or a removal.
@Suite(.timeLimit(.minutes(2))) struct JournalPauseTests {
    @Test(arguments: JournalBackend.allCases)
    func aPauseIsReadBackWithItsSessionAndHidesItsDeadlineUntilResumed(_ backend: JournalBackend) throws {
        let place = try JournalPlace(backend)
        defer { place.remove() }
        let (fork, other) = (JournalFixtures.id(1), JournalFixtures.id(2))
        let journal = try place.open()
        try journal.appendAndWait([.created(JournalFixtures.creation(fork)), .paused(sessionID: fork, true)])
        try journal.appendAndWait([.created(JournalFixtures.creation(other))])
        try journal.appendAndWait([
            .deadline(sessionID: fork, at: 50), .deadline(sessionID: other, at: 60),
            // Both leave memory (PostgreSQL offers only sessions nobody holds to the waker).
            .settled(sessionID: fork, revision: 0), .settled(sessionID: other, revision: 0),
        ])
        #expect(try journal.deadlines(through: 100, limit: 10).map(\.sessionID) == [other])
        #expect(try journal.deadlines(after: 0, limit: 10).map(\.sessionID) == [other])
        journal.close()

        let reopened = try place.open()
        defer { reopened.close() }
        #expect(try reopened.recover(only: [fork]).first?.effectsPaused == true)
        #expect(try reopened.recover(only: [other]).first?.effectsPaused == false)
        #expect(try reopened.recover().sessions.map(\.effectsPaused) == [true, false])
        // Reading them back took them (PostgreSQL): let go again, as passivations do.
        try reopened.appendAndWait([.settled(sessionID: fork, revision: 0), .settled(sessionID: other, revision: 0)])
        #expect(try reopened.deadlines(through: 100, limit: 10).map(\.sessionID) == [other])

        // Resumed by its owner: its deadline wakes it again.
        _ = try reopened.recover(only: [fork])
        try reopened.appendAndWait([.settled(sessionID: fork, revision: nil), .paused(sessionID: fork, false)])
        #expect(try reopened.recover(only: [fork]).first?.effectsPaused == false)
        try reopened.appendAndWait([.settled(sessionID: fork, revision: 0)])
        #expect(try reopened.deadlines(through: 100, limit: 10).map(\.sessionID) == [fork, other])

        // A new incarnation of the id starts unpaused; a removal forgets the pause.
        try reopened.appendAndWait([
            .created(JournalFixtures.creation(other, epoch: 9)), .paused(sessionID: other, true),
        ])
        #expect(try reopened.recover(only: [other]).first?.effectsPaused == true)
        try reopened.appendAndWait([.created(JournalFixtures.creation(other, epoch: 10))])
        #expect(try reopened.recover(only: [other]).first?.effectsPaused == false)
        try reopened.appendAndWait([.paused(sessionID: other, true), .removed(sessionID: other)])
        _ = try reopened.compact()
        try reopened.appendAndWait([.created(JournalFixtures.creation(other, epoch: 11))])
        #expect(try reopened.recover(only: [other]).first?.effectsPaused == false)
    }
}
