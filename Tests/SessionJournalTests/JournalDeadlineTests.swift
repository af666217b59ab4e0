import Testing

@testable import SessionJournal

/// The deadline index: what wakes a passive session when its durable timer is due.
@Suite struct JournalDeadlineTests {
    @Test func deadlinesAreIndexedByTimeReplacedClearedAndGoWithTheirSession() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let (a, b, c) = (JournalFixtures.id(1), JournalFixtures.id(2), JournalFixtures.id(3))
        let journal = try JournalFixtures.open(directory)
        try journal.appendAndWait([a, b, c].map { .created(JournalFixtures.creation($0)) })
        try journal.appendAndWait([
            .deadline(sessionID: a, at: 300), .deadline(sessionID: b, at: 100), .deadline(sessionID: c, at: 200),
        ])
        #expect(try journal.deadlines(through: 250, limit: 10).map(\.sessionID) == [b, c])
        #expect(try journal.deadlines(through: 250, limit: 1) == [JournalDeadline(sessionID: b, at: 100)])
        #expect(try journal.deadline(after: 100) == 200)
        #expect(try journal.deadline(after: 300) == nil)
        #expect(try journal.deadlineCount() == 3)

        // A new deadline replaces the old; none clears it; a removed or re-created session loses it.
        try journal.appendAndWait([.deadline(sessionID: b, at: 400), .deadline(sessionID: c, at: nil)])
        try journal.appendAndWait([.removed(sessionID: a)])
        #expect(try journal.deadlines(through: 1000, limit: 10) == [JournalDeadline(sessionID: b, at: 400)])
        try journal.appendAndWait([.created(JournalFixtures.creation(b))])
        #expect(try journal.deadlineCount() == 0)
        journal.close()
    }

    /// `session.retention`'s index: when each session last left memory. A passivation (the settled mark) writes
    /// the time; sessions without one are stamped; a session with a deadline pending is not a candidate; removal
    /// and re-creation forget the time.
    @Test func lastActivityIsKeptForRetentionAndGoesWithTheSession() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let (a, b, c) = (JournalFixtures.id(1), JournalFixtures.id(2), JournalFixtures.id(3))
        let journal = try JournalFixtures.open(directory)
        defer { journal.close() }
        try journal.appendAndWait([a, b, c].map { .created(JournalFixtures.creation($0)) })
        #expect(try journal.abandonedSessions(before: .max, limit: 10).isEmpty)
        try journal.appendAndWait([.settled(sessionID: a, revision: 0)])  // a left memory now
        #expect(try journal.stampActivity(at: 5) == 2)  // b and c had no time
        #expect(try journal.stampActivity(at: 6) == 0)
        #expect(try journal.abandonedSessions(before: 10, limit: 10) == [b, c])
        #expect(try journal.abandonedSessions(before: 10, limit: 1) == [b])
        #expect(try journal.abandonedSessions(before: .max, limit: 10) == [b, c, a])

        try journal.appendAndWait([.deadline(sessionID: c, at: 1_000)])  // a timer to come is activity to come
        #expect(try journal.abandonedSessions(before: 10, limit: 10) == [b])
        try journal.touchActivity(of: [b], at: 20)
        #expect(try journal.abandonedSessions(before: 10, limit: 10).isEmpty)
        #expect(try journal.abandonedSessions(before: 21, limit: 10) == [b])

        try journal.appendAndWait([.removed(sessionID: b), .created(JournalFixtures.creation(a))])
        #expect(try journal.abandonedSessions(before: .max, limit: 10).isEmpty)
        #expect(try journal.stampActivity(at: 7) == 1)  // a, created again
        #expect(try journal.abandonedSessions(before: .max, limit: 10) == [a])
    }

    @Test func deadlinesSurviveAReopen() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let id = JournalFixtures.id(1)
        let journal = try JournalFixtures.open(directory)
        try journal.appendAndWait([.created(JournalFixtures.creation(id)), .deadline(sessionID: id, at: 42)])
        journal.close()
        let reopened = try JournalFixtures.open(directory)
        defer { reopened.close() }
        #expect(try reopened.deadlines(through: 42, limit: 10) == [JournalDeadline(sessionID: id, at: 42)])
    }

    /// One session read back through the indexes (an activation) is what the whole recovery gives for it: its
    /// snapshot, the events after it (not those of an earlier incarnation of the id), its keyed answers.
    @Test func recoveringOneSessionGivesWhatTheWholeRecoveryGivesForIt() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let (a, b) = (JournalFixtures.id(1), JournalFixtures.id(2))
        let journal = try JournalFixtures.open(directory)
        try journal.appendAndWait([.created(JournalFixtures.creation(a)), JournalFixtures.event(a, 1)])
        try journal.appendAndWait([.created(JournalFixtures.creation(a, epoch: 9))])  // a new incarnation
        try journal.appendAndWait(
            [.created(JournalFixtures.creation(b))] + (1...4).map { JournalFixtures.event(b, UInt64($0)) }
                + (1...2).map { JournalFixtures.event(a, UInt64($0)) }
        )
        let answer = KeyedAnswer(sessionID: b, key: "k", fingerprint: 1, epoch: 7, revision: 4, state: "{}")
        try journal.appendAndWait([
            .snapshot(sessionID: b, revision: 2, state: #"{"count":2}"#), JournalFixtures.event(b, 5),
            .answered(answer),
        ])
        let whole = try journal.recover().sessions
        #expect(try journal.recover(only: [a]) == whole.filter { $0.creation.id == a })
        #expect(try journal.recover(only: [b, a]) == whole)
        #expect(try journal.recover(only: [b]).first?.answers == [answer])
        #expect(try journal.recover(only: [JournalFixtures.id(3)]).isEmpty)
        journal.close()
    }

    /// A session settled at its snapshot is read back by its keys alone; once the mark is cleared, what it appends
    /// after is read again.
    @Test func aSettledSessionIsReadAtItsSnapshotAndItsLaterEventsOnceTheMarkIsCleared() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let id = JournalFixtures.id(1)
        let journal = try JournalFixtures.open(directory)
        try journal.appendAndWait(
            [.created(JournalFixtures.creation(id))] + (1...3).map { JournalFixtures.event(id, UInt64($0)) }
                + [.snapshot(sessionID: id, revision: 3, state: #"{"count":3}"#), .settled(sessionID: id, revision: 3)]
        )
        let settled = try #require(try journal.recover(only: [id]).first)
        #expect(settled.revision == 3)
        #expect(settled.events.isEmpty)
        #expect(try settled == journal.recover().sessions.first)

        try journal.appendAndWait([.settled(sessionID: id, revision: nil), JournalFixtures.event(id, 4)])
        #expect(try journal.recover(only: [id]).first?.revision == 4)
        // A mark at an older revision than the snapshot is not trusted either.
        try journal.appendAndWait([.settled(sessionID: id, revision: 2)])
        #expect(try journal.recover(only: [id]).first?.revision == 4)
        journal.close()
    }

    /// A batch (the timer waker's) of settled and unsettled sessions, few and many of the latter: each read as the
    /// whole recovery reads it, settled ones by their keys, the rest through the log.
    @Test(arguments: [3, 12])
    func aBatchOfSettledAndUnsettledSessionsIsReadAsTheWholeRecoveryReadsIt(unsettledCount: Int) throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let journal = try JournalFixtures.open(directory)
        defer { journal.close() }
        var ids: [String] = []
        for number in 1...(20 + unsettledCount) {
            let id = JournalFixtures.id(number)
            ids.append(id)
            var records: [JournalRecord] = [.created(JournalFixtures.creation(id))]
            records += (1...4).map { JournalFixtures.event(id, UInt64($0)) }
            records.append(.snapshot(sessionID: id, revision: 2, state: #"{"count":2}"#))
            if number <= 20 {
                records.append(.snapshot(sessionID: id, revision: 4, state: #"{"count":4}"#))
                records.append(.settled(sessionID: id, revision: 4))
            }
            try journal.appendAndWait(records)
        }
        let whole = Dictionary(uniqueKeysWithValues: try journal.recover().sessions.map { ($0.creation.id, $0) })
        let batch = try journal.recover(only: Set(ids + [JournalFixtures.id(999)]))
        #expect(batch.count == ids.count)
        for session in batch {
            #expect(session == whole[session.creation.id])
            #expect(session.revision == 4)
        }
    }
}
