import Dispatch
import Foundation
import Synchronization
import Testing

@testable import SessionJournal

@Suite struct JournalTests {
    @Test func appendedRecordsAreRecoveredAfterReopening() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let a = JournalFixtures.id(1)
        let b = JournalFixtures.id(2)
        let journal = try JournalFixtures.open(directory)
        try journal.appendAndWait([.created(JournalFixtures.creation(a)), .created(JournalFixtures.creation(b))])
        try journal.appendAndWait([JournalFixtures.event(a, 1), JournalFixtures.event(b, 1, origin: .effect)])
        try journal.appendAndWait([JournalFixtures.event(a, 2)])
        journal.close()

        let reopened = try JournalFixtures.open(directory)
        defer { reopened.close() }
        let recovery = try reopened.recover()
        #expect(recovery.problems.isEmpty)
        #expect(recovery.movedAside == nil)
        #expect(recovery.sessions.map(\.creation) == [JournalFixtures.creation(a), JournalFixtures.creation(b)])
        #expect(recovery.sessions[0].events.map(\.revision) == [1, 2])
        #expect(recovery.sessions[0].revision == 2)
        #expect(recovery.sessions[0].baseState == #"{"count":0}"#)
        #expect(
            recovery.sessions[1].events == [JournalEvent(revision: 1, event: #"{"type":"add","n":1}"#, origin: .effect)]
        )
    }

    @Test func snapshotBecomesTheBaseAndDropsTheEventsItCovers() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let id = JournalFixtures.id(1)
        let journal = try JournalFixtures.open(directory)
        try journal.appendAndWait(
            [.created(JournalFixtures.creation(id))] + (1...5).map { JournalFixtures.event(id, $0) }
        )
        try journal.appendAndWait([.snapshot(sessionID: id, revision: 3, state: #"{"count":6}"#)])
        try journal.appendAndWait([JournalFixtures.event(id, 6)])
        #expect(try journal.compact().deletedEvents == 3)
        let stored = try journal.withStore { store throws(JournalError) in
            try store.connection.integer("SELECT count(*) FROM events")
        }
        #expect(stored == 3)
        journal.close()

        let reopened = try JournalFixtures.open(directory)
        defer { reopened.close() }
        let session = try #require(try reopened.recover().sessions.first)
        #expect(session.baseRevision == 3)
        #expect(session.baseState == #"{"count":6}"#)
        #expect(session.events.map(\.revision) == [4, 5, 6])
    }

    @Test func removedSessionIsNotRecovered() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let journal = try JournalFixtures.open(directory)
        let gone = JournalFixtures.id(1)
        let kept = JournalFixtures.id(2)
        try journal.appendAndWait([
            .created(JournalFixtures.creation(gone)), JournalFixtures.event(gone, 1),
            .snapshot(sessionID: gone, revision: 1, state: "{}"), JournalFixtures.event(gone, 2),
            .created(JournalFixtures.creation(kept)),
        ])
        try journal.appendAndWait([.removed(sessionID: gone)])
        #expect(try journal.recover().sessions.map(\.creation.id) == [kept])
        _ = try journal.compact()
        let rows = try journal.withStore { store throws(JournalError) in
            try store.connection.integer(
                "SELECT (SELECT count(*) FROM events) + (SELECT count(*) FROM snapshots) + (SELECT count(*) FROM sessions)"
            )
        }
        #expect(rows == 1)
        #expect(try journal.recover().sessions.map(\.creation.id) == [kept])
        journal.close()
    }

    @Test func creatingAnIdAgainReplacesItsHistory() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let journal = try JournalFixtures.open(directory)
        defer { journal.close() }
        let id = JournalFixtures.id(1)
        try journal.appendAndWait([.created(JournalFixtures.creation(id, epoch: 1)), JournalFixtures.event(id, 1)])
        try journal.appendAndWait([.created(JournalFixtures.creation(id, epoch: 2))])
        let session = try #require(try journal.recover().sessions.first)
        #expect(session.creation.epoch == 2)
        #expect(session.events.isEmpty)
    }

    @Test func appendsArrivingDuringACommitShareTheNextTransaction() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let journal = try JournalFixtures.open(directory)
        defer { journal.close() }
        let ids = (1...20).map(JournalFixtures.id)
        try journal.appendAndWait(ids.map { .created(JournalFixtures.creation($0)) })
        let before = journal.statistics

        // Hold the writer queue as a long commit would, then append from 20 sessions.
        let completed = DispatchGroup()
        let failures = Mutex(0)
        journal.whileWriterHeld {
            for id in ids {
                completed.enter()
                journal.append([JournalFixtures.event(id, 1)]) { result in
                    if case .failure = result { failures.withLock { $0 += 1 } }
                    completed.leave()
                }
            }
        }
        completed.wait()

        let after = journal.statistics
        #expect(failures.withLock { $0 } == 0)
        #expect(after.commits - before.commits == 1)
        #expect(after.records - before.records == 20)
    }

    @Test func appendAfterCloseFails() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let journal = try JournalFixtures.open(directory)
        journal.close()
        #expect(throws: JournalError.self) {
            try journal.appendAndWait([.created(JournalFixtures.creation(JournalFixtures.id(1)))])
        }
    }

    @Test(.timeLimit(.minutes(1))) func intervalPolicySyncsAfterCommits() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let journal = try JournalFixtures.open(directory, JournalConfiguration(fsync: .interval(milliseconds: 5)))
        defer { journal.close() }
        try await journal.append([.created(JournalFixtures.creation(JournalFixtures.id(1)))])
        #expect(journal.statistics.commits == 1)
        // The timer's sync is the outcome; wait for it with a bound (the suite's time limit).
        while journal.statistics.syncs == 0 {
            try await Task.sleep(for: .milliseconds(5))
        }
        #expect(journal.statistics.syncs >= 1)
    }

    @Test func compactionDeletesCoveredAndOrphanedRows() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let journal = try JournalFixtures.open(directory)
        defer { journal.close() }
        let id = JournalFixtures.id(1)
        try journal.appendAndWait(
            [.created(JournalFixtures.creation(id))] + (1...4).map { JournalFixtures.event(id, $0) }
        )
        try journal.appendAndWait([.snapshot(sessionID: id, revision: 4, state: "{}")])
        // Rows a salvage or an older file could leave: covered events and another session's orphans.
        try journal.withStore { store throws(JournalError) in
            try store.connection.execute(
                """
                INSERT INTO events(session, rev, origin, event, crc) VALUES('\(id)', 2, 0, '{}', 0);
                INSERT INTO events(session, rev, origin, event, crc) VALUES('orphan', 1, 0, '{}', 0);
                INSERT INTO snapshots(session, rev, state, crc) VALUES('orphan', 1, '{}', 0);
                """
            )
        }
        let report = try journal.compact()
        #expect(report.deletedEvents == 6)  // events 1...4, the extra covered one, the orphan
        #expect(report.deletedSnapshots == 1)
        #expect(report.bytes > 0)
        let session = try #require(try journal.recover().sessions.first)
        #expect(session.baseRevision == 4)
        #expect(session.events.isEmpty)
    }

    /// A session with events 1 to 4 and a snapshot at 3, once the background ticks deleted the three it covers (the
    /// ticks are the outcome: waited for with a bound, the test's time limit). Returns the session's id.
    @discardableResult
    private static func coverThreeOfFourEvents(_ journal: Journal) async throws -> String {
        let id = JournalFixtures.id(1)
        try await journal.append(
            [.created(JournalFixtures.creation(id))] + (1...4).map { JournalFixtures.event(id, $0) }
        )
        try await journal.append([.snapshot(sessionID: id, revision: 3, state: "{}")])
        while journal.statistics.compactedEvents < 3 {
            try await Task.sleep(for: .milliseconds(1))
        }
        return id
    }

    @Test(.timeLimit(.minutes(1))) func backgroundCompactionDeletesCoveredEvents() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let journal = try JournalFixtures.open(directory, JournalConfiguration(compactionIntervalMilliseconds: 5))
        defer { journal.close() }
        try await Self.coverThreeOfFourEvents(journal)
        #expect(journal.statistics.compactedEvents == 3)
        #expect(try journal.recover().sessions.first?.events.map(\.revision) == [4])
    }

    /// Once the background ticks can find nothing (the index caught up with the log, the cursor over every indexed row
    /// since the last commit) they stop running, and the next commit starts them again; also on a log whose events
    /// begin 10,000,000 positions in, as an old server's do (the rule once counted the ticks of a sweep from the log's
    /// length: 4,000 of them here).
    @Test(.timeLimit(.minutes(1)), arguments: [Int64(0), 10_000_000])
    func backgroundTicksStopWhenTheyCanFindNothingUntilTheNextCommit(firstPosition: Int64) async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let journal = try JournalFixtures.open(directory, JournalConfiguration(compactionIntervalMilliseconds: 1))
        defer { journal.close() }
        try journal.withStore { store throws(JournalError) in
            try store.connection.execute(
                """
                INSERT INTO sqlite_sequence(name, seq) VALUES('events', \(firstPosition));
                INSERT OR REPLACE INTO meta(name, value) VALUES('timeline.through', '\(firstPosition)')
                """
            )
            store.reloadTimelineThrough()
        }
        let id = try await Self.coverThreeOfFourEvents(journal)
        // A tick a millisecond: about 200 in this pause without the rule; with it, at most the few that finish the
        // index and the cursor's round (a bound, not a time: a slower machine runs fewer).
        let before = journal.statistics.compactionTicks
        try await Task.sleep(for: .milliseconds(200))
        #expect(journal.statistics.compactionTicks - before <= 3)
        try await journal.append([.snapshot(sessionID: id, revision: 4, state: "{}")])
        while journal.statistics.compactedEvents < 4 {
            try await Task.sleep(for: .milliseconds(1))
        }
        #expect(try journal.recover().sessions.first?.events.isEmpty == true)
    }

    @Test func fsyncPolicyParsesItsFlagForms() {
        #expect(FsyncPolicy(parsing: "per-commit") == .perCommit)
        #expect(FsyncPolicy(parsing: "interval:250") == .interval(milliseconds: 250))
        #expect(FsyncPolicy(parsing: "interval:0") == nil)
        #expect(FsyncPolicy(parsing: "interval:") == nil)
        #expect(FsyncPolicy(parsing: "always") == nil)
        #expect(FsyncPolicy.interval(milliseconds: 10).description == "interval:10")
    }
}
