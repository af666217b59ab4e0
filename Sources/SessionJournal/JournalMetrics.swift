package import Metrics

/// The journal's swift-metrics handles, created once when it opens, from the factory it is given.
///
/// Names: `journal_commits_total{outcome=committed|failed}`, `journal_records_total`, `journal_batch_records` and
/// `journal_batch_appends` (per group commit: records written, appends that shared it), `journal_commit_duration_seconds`
/// (BEGIN to COMMIT, the WAL sync included under per-commit), `journal_fsyncs_total`, `journal_bytes` (database file
/// plus WAL after each commit and compaction), `journal_compactions_total{kind=background|full}`, `journal_healthy`
/// (1 while commits work, 0 from a failed commit until a test write succeeds) and `journal_failing{cause=disk_full|
/// io_error}` (1 for the cause of the current failure, else 0).
///
/// Concurrency: the handles are thread-safe; the journal updates them on its writer queue.
package final class JournalMetrics: Sendable {
    package let committed: Counter
    package let failed: Counter
    package let records: Counter
    package let batchRecords: Recorder
    package let batchAppends: Recorder
    package let commitDuration: Timer
    let fsyncs: Counter
    package let bytes: Gauge
    let backgroundCompactions: Counter
    package let fullCompactions: Counter
    let healthy: Gauge
    let failing: [(cause: String, gauge: Gauge)]

    package init(factory: any MetricsFactory) {
        committed = Counter(label: "journal_commits_total", dimensions: [("outcome", "committed")], factory: factory)
        failed = Counter(label: "journal_commits_total", dimensions: [("outcome", "failed")], factory: factory)
        records = Counter(label: "journal_records_total", factory: factory)
        batchRecords = Recorder(label: "journal_batch_records", factory: factory)
        batchAppends = Recorder(label: "journal_batch_appends", factory: factory)
        commitDuration = Timer(label: "journal_commit_duration_seconds", factory: factory)
        fsyncs = Counter(label: "journal_fsyncs_total", factory: factory)
        bytes = Gauge(label: "journal_bytes", factory: factory)
        backgroundCompactions = Counter(
            label: "journal_compactions_total",
            dimensions: [("kind", "background")],
            factory: factory
        )
        fullCompactions = Counter(label: "journal_compactions_total", dimensions: [("kind", "full")], factory: factory)
        healthy = Gauge(label: "journal_healthy", factory: factory)
        failing = Self.causes.map { cause in
            (cause, Gauge(label: "journal_failing", dimensions: [("cause", cause)], factory: factory))
        }
    }

    /// The causes `journal_failing` names.
    static let causes = ["disk_full", "io_error"]

    /// The `journal_failing` cause of a failed commit.
    static func cause(of error: JournalError) -> String {
        error.code == .full ? "disk_full" : "io_error"
    }

    /// Sets the health gauges: healthy when `failure` is nil, else failing for its cause.
    package func report(_ failure: JournalError?) {
        healthy.record(failure == nil ? 1 : 0)
        let cause = failure.map(Self.cause(of:))
        for (name, gauge) in failing { gauge.record(name == cause ? 1 : 0) }
    }

    /// Buckets for the batch histograms, for a Prometheus factory (its defaults suit seconds, not counts).
    static let batchBuckets: [Double] = [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 4096]

    /// The histogram names `batchBuckets` is meant for.
    static let batchHistograms = ["journal_batch_records", "journal_batch_appends"]
}
