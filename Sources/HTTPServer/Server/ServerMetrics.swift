import Metrics

/// The server's swift-metrics handles, created once and shared by every shard (the handles are thread-safe).
struct ServerMetrics: Sendable {
    private let responses: [Counter]
    private let duration: Timer
    private let connections: Meter
    private let rejected: Counter

    init(label: String) {
        responses = (1...5).map { Counter(label: "\(label)_responses_total", dimensions: [("status", "\($0)xx")]) }
        duration = Timer(label: "\(label)_request_duration_seconds")
        connections = Meter(label: "\(label)_connections")
        rejected = Counter(label: "\(label)_connections_rejected_total")
    }

    func record(status: Int, since start: UInt64, now: UInt64) {
        let index = min(max(status / 100, 1), 5) - 1
        responses[index].increment()
        if start > 0, now >= start { duration.recordNanoseconds(Int64(now - start)) }
    }

    func connectionOpened() { connections.increment() }
    func connectionClosed() { connections.decrement() }
    func connectionRejected() { rejected.increment() }
}
