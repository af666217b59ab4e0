import CEpoll
import Dispatch
import Glibc
import Logging
import Metrics
import Synchronization

/// What every shard shares: configuration, router, logger, metrics, the shards themselves, the listener and the
/// connection count.
///
/// Immutable after `start` except `active` and `nextID` (atomics) and `drain` (behind a `Mutex`); `nextShard`
/// is touched only on shard 0's queue, which owns the listening socket.
final class ServerCore: @unchecked Sendable {
    let configuration: HTTPServerConfiguration
    let router: Router
    let logger: Logger
    let metrics: ServerMetrics
    let timeouts: ConnectionLifecycle.Timeouts
    let writeTimeout: UInt64
    /// Input a connection may buffer while it cannot parse (a handler or a stream is working).
    let maxBufferedInput: Int
    var shards: [Shard] = []
    let active = Atomic<Int>(0)
    let nextID = Atomic<UInt64>(1)
    private var nextShard = 0
    struct DrainState {
        var drained: Set<Int> = []
        /// Every `shutdown` call waiting for the drain; a second call waits beside the first.
        var waiters: [CheckedContinuation<Void, Never>] = []
    }
    let drain = Mutex(DrainState())
    static let overCapacity: [UInt8] = Array(
        ("HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/problem+json\r\nContent-Length: 97\r\n"
            + "Connection: close\r\n\r\n"
            + #"{"type":"about:blank","title":"Service Unavailable","status":503,"detail":"Too many connections."}"#)
            .utf8
    )

    init(configuration: HTTPServerConfiguration, router: Router, logger: Logger) {
        self.configuration = configuration
        self.router = router
        self.logger = logger
        self.metrics = ServerMetrics(
            label: "http_server",
            factory: configuration.metricsFactory ?? MetricsSystem.factory
        )
        self.timeouts = ConnectionLifecycle.Timeouts(
            header: configuration.headerTimeout.nanoseconds,
            body: configuration.bodyTimeout.nanoseconds,
            idle: configuration.idleTimeout.nanoseconds,
            linger: min(configuration.headerTimeout.nanoseconds, 5_000_000_000)
        )
        self.writeTimeout = configuration.writeTimeout.nanoseconds
        self.maxBufferedInput = configuration.limits.maxHeaderBytes + router.defaultMaxBodySize
    }

    /// A socket was accepted (on shard 0's queue): check the cap, then hand it to a shard round-robin.
    func accepted(_ fd: Int32) {
        if active.add(1, ordering: .relaxed).newValue > configuration.maxConnections {
            rejectOverCapacity(fd)
            return
        }
        var one: Int32 = 1
        _ = setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
        let id = nextID.add(1, ordering: .relaxed).oldValue
        let shard = shards[nextShard % shards.count]
        nextShard &+= 1
        if shard.index == 0 {
            shard.adopt(fd, id: id)
        } else {
            shard.queue.async { shard.adopt(fd, id: id) }
        }
    }

    /// Answers 503 and closes, instead of leaving the client in the backlog.
    func rejectOverCapacity(_ fd: Int32) {
        metrics.connectionRejected()
        Self.overCapacity.withUnsafeBytes { p in _ = send(fd, p.baseAddress, p.count, Int32(MSG_NOSIGNAL)) }
        shutdown(fd, Int32(SHUT_WR))
        close(fd)
        active.subtract(1, ordering: .relaxed)
    }

    func connectionClosed() {
        active.subtract(1, ordering: .relaxed)
        metrics.connectionClosed()
    }

    func shardDrained(_ shard: Shard) {
        let waiters = drain.withLock { s -> [CheckedContinuation<Void, Never>] in
            s.drained.insert(shard.index)
            guard s.drained.count == shards.count else { return [] }
            defer { s.waiters = [] }
            return s.waiters
        }
        for waiter in waiters { waiter.resume() }
    }

    func logAccess(method: HTTPMethod?, path: String?, status: Int, connection: UInt64) {
        guard logger.logLevel <= .info else { return }
        logger.info(
            "\(method?.rawValue ?? "-") \(path ?? "-") \(status)",
            metadata: ["connection.id": "\(connection)", "http.status": "\(status)"]
        )
    }
}
