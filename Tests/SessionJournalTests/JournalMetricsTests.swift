import MetricsTestKit
import Testing

@testable import SessionJournal

/// Each test hands the journal its own `TestMetrics` factory, so nothing touches the process-wide `MetricsSystem`.
@Suite struct JournalMetricsTests {
    @Test func commitsRecordsBatchesDurationsAndSyncsAreMeasured() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let metrics = TestMetrics()
        let journal = try Journal.open(
            directory: directory.path,
            logger: JournalFixtures.logger,
            metricsFactory: metrics
        )
        defer { journal.close() }
        let id = JournalFixtures.id(1)
        try journal.appendAndWait([.created(JournalFixtures.creation(id)), JournalFixtures.event(id, 1)])
        try journal.appendAndWait([JournalFixtures.event(id, 2)])
        try journal.appendAndWait([])  // a durability barrier: a commit that writes nothing and syncs nothing

        #expect(try metrics.expectCounter("journal_commits_total", [("outcome", "committed")]).totalValue == 3)
        #expect(try metrics.expectCounter("journal_commits_total", [("outcome", "failed")]).totalValue == 0)
        #expect(try metrics.expectCounter("journal_records_total").totalValue == 3)
        #expect(try metrics.expectRecorder("journal_batch_records").values == [2, 1, 0])
        #expect(try metrics.expectRecorder("journal_batch_appends").values == [1, 1, 1])
        #expect(try metrics.expectTimer("journal_commit_duration_seconds").values.count == 3)
        #expect(try metrics.expectCounter("journal_fsyncs_total").totalValue == 2)
        #expect((try metrics.expectGauge("journal_bytes").lastValue ?? 0) > 0)
    }

    @Test func compactionsAreCountedAndTheFileSizeFollows() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let metrics = TestMetrics()
        let journal = try Journal.open(
            directory: directory.path,
            configuration: JournalConfiguration(compactionIntervalMilliseconds: 0),
            logger: JournalFixtures.logger,
            metricsFactory: metrics
        )
        defer { journal.close() }
        let id = JournalFixtures.id(1)
        try journal.appendAndWait(
            [.created(JournalFixtures.creation(id))] + (1...50).map { JournalFixtures.event(id, $0) }
        )
        let report = try journal.compact()
        #expect(try metrics.expectCounter("journal_compactions_total", [("kind", "full")]).totalValue == 1)
        #expect(try metrics.expectCounter("journal_compactions_total", [("kind", "background")]).totalValue == 0)
        // After the WAL is truncated the file is the database alone.
        #expect(try metrics.expectGauge("journal_bytes").lastValue == Double(report.bytes))
    }
}
