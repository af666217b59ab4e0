import Glibc
import Metrics

/// The server's swift-metrics handles, created once from one factory and shared by every shard.
///
/// Immutable; the handles themselves are thread-safe, so any shard queue or Task may record through them.
final class ServerMetrics: Sendable {
    private let responses: [Counter]
    private let duration: Timer
    /// Open connections: incremented when a shard adopts a socket, decremented when it closes one.
    private let connections: Meter
    private let rejected: Counter
    private let sent: Counter
    /// `accept` failures by errno name, the usual ones first and `other` last.
    private let acceptErrors: [Counter]
    static let acceptErrnos: [Int32] = [EMFILE, ENFILE, ENOBUFS, ENOMEM]

    /// Creates the handles under `label` with `factory` (the global `MetricsSystem.factory` unless a test or an
    /// embedder chose another).
    init(label: String, factory: any MetricsFactory) {
        responses = (1...5).map {
            Counter(label: "\(label)_responses_total", dimensions: [("status", "\($0)xx")], factory: factory)
        }
        duration = Timer(label: "\(label)_request_duration_seconds", factory: factory)
        connections = Meter(label: "\(label)_connections", factory: factory)
        rejected = Counter(label: "\(label)_connections_rejected_total", factory: factory)
        sent = Counter(label: "\(label)_bytes_sent_total", factory: factory)
        acceptErrors = (Self.acceptErrnos.map(Self.errnoName) + ["other"]).map {
            Counter(label: "\(label)_accept_errors_total", dimensions: [("errno", $0)], factory: factory)
        }
    }

    func record(status: Int, since start: UInt64, now: UInt64) {
        let index = min(max(status / 100, 1), 5) - 1
        responses[index].increment()
        if start > 0, now >= start { duration.recordNanoseconds(Int64(now - start)) }
    }

    func connectionOpened() { connections.increment() }
    func connectionClosed() { connections.decrement() }
    func connectionRejected() { rejected.increment() }
    /// `accept` failed with `errno` (out of descriptors or memory; a connection aborted before it is not counted).
    func acceptFailed(errno code: Int32) {
        acceptErrors[Self.acceptErrnos.firstIndex(of: code) ?? Self.acceptErrnos.count].increment()
    }

    static func errnoName(_ code: Int32) -> String {
        switch code {
        case EMFILE: "EMFILE"
        case ENFILE: "ENFILE"
        case ENOBUFS: "ENOBUFS"
        case ENOMEM: "ENOMEM"
        default: "other"
        }
    }

    /// Bytes the kernel took from a connection's output: heads, bodies and stream data after compression.
    func bytesSent(_ count: Int) { sent.increment(by: Int64(count)) }
}
