import Dispatch
import MetricsTestKit
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

    @Test func writersThatArriveWhileTheWindowIsOpenShareOneCommit() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let metrics = TestMetrics()
        // One append is enough company here, and the window (0.3 s) outlasts the three appends below many times.
        let journal = try open(directory, metrics, delay: 300_000, siblings: 1)
        defer { journal.close() }
        let id = JournalFixtures.id(1)
        try journal.appendAndWait([.created(JournalFixtures.creation(id)), JournalFixtures.event(id, 1)])
        let done = DispatchGroup()
        for revision in 2...4 {
            done.enter()
            journal.append([JournalFixtures.event(id, UInt64(revision))]) { _ in done.leave() }
        }
        done.wait()
        #expect(try metrics.expectRecorder("journal_batch_appends").values == [1, 3])
        #expect(try metrics.expectRecorder("journal_batch_records").values == [2, 3])
    }

    @Test func aLoneWriterNeverWaitsForTheWindow() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let metrics = TestMetrics()
        // A window of ten minutes: if a commit of one writer opened it, this test would hit its time limit.
        let journal = try open(directory, metrics, delay: 600_000_000, siblings: 4)
        defer { journal.close() }
        let id = JournalFixtures.id(1)
        try journal.appendAndWait([.created(JournalFixtures.creation(id))])
        for revision in 1...5 { try journal.appendAndWait([JournalFixtures.event(id, UInt64(revision))]) }
        #expect(try metrics.expectRecorder("journal_batch_appends").values == [1, 1, 1, 1, 1, 1])
    }
}
