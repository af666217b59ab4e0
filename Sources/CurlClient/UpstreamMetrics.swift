import Metrics
import Upstream

/// The client's swift-metrics handles: `upstream_requests_total{outcome}` (`2xx` … `5xx` for answered requests,
/// `failed`, `cancelled`) and `upstream_request_duration_seconds`, from start to the end of the transfer.
///
/// Immutable; the handles are thread-safe. Recorded on the client's queue when a transfer leaves the multi handle.
final class UpstreamMetrics: Sendable {
    private let answered: [Counter]
    private let failed: Counter
    private let cancelled: Counter
    private let duration: Timer

    init(factory: any MetricsFactory) {
        let label = "upstream_requests_total"
        answered = (1...5).map { Counter(label: label, dimensions: [("outcome", "\($0)xx")], factory: factory) }
        failed = Counter(label: label, dimensions: [("outcome", "failed")], factory: factory)
        cancelled = Counter(label: label, dimensions: [("outcome", "cancelled")], factory: factory)
        duration = Timer(label: "upstream_request_duration_seconds", factory: factory)
    }

    /// Records one finished transfer: its final status (0 when none), its error, and how long it ran.
    func record(status: Int, error: UpstreamError?, nanoseconds: UInt64) {
        switch error?.code {
        case .cancelled?: cancelled.increment()
        case nil where (100..<600).contains(status): answered[status / 100 - 1].increment()
        default: failed.increment()
        }
        duration.recordNanoseconds(Int64(clamping: nanoseconds))
    }
}
