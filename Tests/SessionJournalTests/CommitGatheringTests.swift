import Dispatch
import Glibc
import MetricsTestKit
import Synchronization
import Testing

@testable import SessionJournal

/// The group commit's gathering window: after a commit shared by enough writers, the next one waits for more to
/// join; a lone writer's commit starts at once. Batches are read from the journal's own metrics.
@Suite(.timeLimit(.minutes(1))) struct CommitGatheringTests {
    private func open(
        _ directory: TemporaryDirectory,
        _ metrics: TestMetrics,
        delay: Int,
        siblings: Int
    ) throws
        -> Journal
    {
        try Journal.open(
            directory: directory.path,
            configuration: JournalConfiguration(
                compactionIntervalMilliseconds: 0,
                commitDelayMicroseconds: delay,
                commitDelaySiblings: siblings
            ),
            logger: JournalFixtures.logger,
            metricsFactory: metrics
        )
    }

    /// Runs `body` with a journal whose first commit (session 1's creation) is done, and the metrics it records to;
    /// closes the journal and removes its directory afterwards.
    private func withJournal(
        delay: Int,
        siblings: Int,
        _ body: (Journal, TestMetrics) throws -> Void
    ) throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let metrics = TestMetrics()
        let journal = try open(directory, metrics, delay: delay, siblings: siblings)
        defer { journal.close() }
        try journal.appendAndWait([.created(JournalFixtures.creation(JournalFixtures.id(1)))])
        try body(journal, metrics)
    }

    /// Appends one event of session 1 for each revision, each on its own, without waiting; the group is left when
    /// all of them are journaled.
    private func appendEach(_ journal: Journal, _ revisions: Range<Int>) -> DispatchGroup {
        let id = JournalFixtures.id(1)
        let done = DispatchGroup()
        for revision in revisions {
            done.enter()
            journal.append([JournalFixtures.event(id, UInt64(revision))]) { _ in done.leave() }
        }
        return done
    }

    /// Makes the journal's next commit carry `count` appends: the writer queue is held while they are made.
    private func commitTogether(_ journal: Journal, _ count: Int, from revision: Int) throws {
        journal.whileWriterHeld { appendEach(journal, revision..<(revision + count)) }.wait()
    }

    @Test func writersThatArriveWhileTheWindowIsOpenShareOneCommit() throws {
        try withJournal(delay: 300_000, siblings: 1) { journal, metrics in
            // One append is enough company here, and the window (0.3 s) outlasts the appends below many times.
            // A commit of four appends: the window after it waits for four. Three arrive meanwhile and share the next
            // commit, which starts when the window runs out.
            try commitTogether(journal, 4, from: 1)
            appendEach(journal, 5..<8).wait()
            #expect(try metrics.expectRecorder("journal_batch_appends").values == [1, 4, 3])
            #expect(try metrics.expectRecorder("journal_batch_records").values == [1, 4, 3])
        }
    }

    @Test func aWindowEndsOnceAsManyWaitAsTheLastCommitsCarried() throws {
        try withJournal(delay: 600_000_000, siblings: 2) { journal, metrics in
            // A window of ten minutes: if it did not end once it has its batch, this test would hit its time limit.
            try commitTogether(journal, 3, from: 1)
            // The window after the commit of three ends when three wait again, as a steady stream's next batch would.
            appendEach(journal, 4..<7).wait()
            let batches = try metrics.expectRecorder("journal_batch_appends").values
            #expect(batches.prefix(2) == [1, 3])
            #expect(batches.dropFirst(2).reduce(0, +) == 3)
        }
    }

    /// Waits (a bounded poll) until the writer has opened its gathering window after the last commit.
    private func windowOpened(_ journal: Journal) -> Bool {
        for _ in 0..<5_000 {
            if journal.pending.withLock({ $0.gathering }) { return true }
            usleep(1_000)
        }
        return false
    }

    @Test func aWindowEndsWhenTheWritersGoIdle() throws {
        try withJournal(delay: 600_000_000, siblings: 2) { journal, metrics in
            // A window of ten minutes: if going idle did not end it, this test would hit its time limit.
            try commitTogether(journal, 3, from: 1)
            // The window after the commit of three waits for three; one comes, and then no writer has anything more.
            #expect(windowOpened(journal))
            let done = appendEach(journal, 4..<5)
            journal.endGatheringWindow()
            done.wait()
            #expect(try metrics.expectRecorder("journal_batch_appends").values == [1, 3, 1])
        }
    }

    @Test func goingIdleWithNothingWaitingLeavesTheWindowOpen() throws {
        try withJournal(delay: 600_000_000, siblings: 2) { journal, metrics in
            try commitTogether(journal, 3, from: 1)
            // An idle server with an empty window: nothing to start, and the window keeps waiting for the three that
            // the answers just released will bring.
            #expect(windowOpened(journal))
            journal.endGatheringWindow()
            #expect(journal.pending.withLock { $0.gathering })
            appendEach(journal, 4..<7).wait()
            #expect(try metrics.expectRecorder("journal_batch_appends").values == [1, 3, 3])
        }
    }

    /// The server watches for idleness (an extra look before each shard sleeps) only for a journal with a window.
    @Test func onlyAJournalWithAWindowAsksToHearWhenTheWritersGoIdle() throws {
        try withJournal(delay: 500, siblings: 4) { journal, _ in #expect(journal.whenWritersIdle != nil) }
        try withJournal(delay: 0, siblings: 4) { journal, _ in #expect(journal.whenWritersIdle == nil) }
    }

    @Test func aLoneWriterNeverWaitsForTheWindow() throws {
        try withJournal(delay: 600_000_000, siblings: 4) { journal, metrics in
            // A window of ten minutes: if a commit of one writer opened it, this test would hit its time limit.
            let id = JournalFixtures.id(1)
            for revision in 1...5 { try journal.appendAndWait([JournalFixtures.event(id, UInt64(revision))]) }
            #expect(try metrics.expectRecorder("journal_batch_appends").values == [1, 1, 1, 1, 1, 1])
        }
    }
}
