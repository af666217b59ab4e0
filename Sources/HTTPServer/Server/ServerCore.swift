import CEpoll
import Dispatch
import Glibc
import Logging
import Metrics
import Synchronization

/// What every shard shares: configuration, router, logger, metrics, the shards themselves, the listener and the
/// connection count.
///
/// Immutable after `start` (`accessLog` is set before it) except `active` and
/// `nextID` (atomics) and `quiesce` (behind a `Mutex`); `nextShard` is touched only on shard 0's queue, which owns
/// the listening socket.
final class ServerCore: @unchecked Sendable {
    let configuration: HTTPServerConfiguration
    let router: Router
    let logger: Logger
    let metrics: ServerMetrics
    let timeouts: ConnectionLifecycle.Timeouts
    /// Input a connection may buffer while it cannot parse (a handler or a stream is working).
    let maxBufferedInput: Int
    /// The connection cap: `configuration.maxConnections`, lowered by `Server.start()` to what the descriptor limit
    /// allows (set before the listener is watched, then only read).
    var maxConnections: Int
    var shards: [Shard] = []
    let active = Atomic<Int>(0)
    let nextID = Atomic<UInt64>(1)
    private var nextShard = 0
    /// Graceful shutdown: the shards whose connections are all closed, and who waits for all of them.
    struct QuiesceState {
        var quiesced: Set<Int> = []
        /// Every `shutdown` call waiting for the shards; a second call waits beside the first.
        var waiters: [CheckedContinuation<Void, Never>] = []
    }
    let quiesce = Mutex(QuiesceState())
    /// Where access lines go; set by `Server.init(configuration:router:logger:accessLog:)` before `start`, then only
    /// read.
    var accessLog: AccessLog?
    /// Called on a shard's waiter thread whenever every shard has run out of ready work and is about to wait
    /// (`Server.whenIdle`); set before `start`, then only read.
    var idleHook: (@Sendable () -> Void)?
    /// Shards not waiting in `poll` (each starts busy), kept only while `idleHook` is set: the shard whose wait
    /// brings it to 0 calls the hook.
    let busyShards = Atomic<Int>(0)
    /// The whole answer to a connection over the cap: a 503 problem, written once.
    static let overCapacity: [UInt8] = {
        let problem = Problem(status: 503, detail: "Too many connections.")
        var out: [UInt8] = []
        ResponseWriter.appendHead(
            status: problem.status,
            headers: HTTPHeaders([("Content-Type", Problem.mediaType)]),
            contentLength: problem.body.count,
            chunked: false,
            keepAlive: false,
            minorVersion: 1,
            date: [],
            to: &out
        )
        out.append(contentsOf: problem.body)
        return out
    }()

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
            linger: min(configuration.headerTimeout.nanoseconds, 5_000_000_000),
            write: configuration.writeTimeout.nanoseconds,
            minBodyRate: UInt64(max(0, configuration.minBodyRate)),
            bodyGrace: configuration.bodyRateGrace.nanoseconds
        )
        self.maxBufferedInput = configuration.limits.maxHeaderBytes + router.defaultMaxBodySize
        self.maxConnections = configuration.maxConnections
    }

    /// A socket was accepted (on shard 0's queue): check the cap, then hand it to a shard round-robin.
    func accepted(_ fd: Int32) {
        if active.add(1, ordering: .relaxed).newValue > maxConnections {
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
        refuse(fd)
        active.subtract(1, ordering: .relaxed)
    }

    /// Answers 503 on a socket never counted as a connection, and closes it.
    func refuse(_ fd: Int32) {
        metrics.connectionRejected()
        Self.overCapacity.withUnsafeBytes { p in _ = send(fd, p.baseAddress, p.count, Int32(MSG_NOSIGNAL)) }
        shutdown(fd, Int32(SHUT_WR))
        close(fd)
    }

    /// Lowers the connection cap to what `RLIMIT_NOFILE` leaves after the reserve (raising the soft limit to the
    /// hard one first when configured), with a warning when it lowers it. Called once by `Server.start()`.
    func clampToDescriptorLimit() {
        let limit = configuration.raisesDescriptorLimit ? DescriptorLimit.raiseSoftToHard() : DescriptorLimit.current()
        guard let limit else { return }
        maxConnections = limit.connectionCap(
            configured: configuration.maxConnections,
            reserve: configuration.descriptorReserve
        )
        guard maxConnections < configuration.maxConnections else { return }
        logger.warning(
            "max.connections lowered to fit the descriptor limit",
            metadata: [
                "http.max_connections": "\(maxConnections)",
                "http.max_connections.configured": "\(configuration.maxConnections)",
                "rlimit.nofile": "\(limit.soft)",
                "http.descriptor_reserve": "\(configuration.descriptorReserve)",
            ]
        )
    }

    func connectionClosed() {
        active.subtract(1, ordering: .relaxed)
        metrics.connectionClosed()
    }

    func shardQuiesced(_ shard: Shard) {
        let waiters = quiesce.withLock { s -> [CheckedContinuation<Void, Never>] in
            s.quiesced.insert(shard.index)
            guard s.quiesced.count == shards.count else { return [] }
            defer { s.waiters = [] }
            return s.waiters
        }
        for waiter in waiters { waiter.resume() }
    }

    /// One access line for an answered request, when the server has an access log: formatted here, on the shard,
    /// into the log's buffer (see `AccessLog`). `route` is the route the request was handed to (nil: none, the
    /// path is looked up for the line); `start` is the monotonic time the head arrived (0: unknown); `bytes` nil
    /// for a streaming answer.
    func logAccess(
        method: HTTPMethod?,
        path: String?,
        route: Router.Route?,
        status: Int,
        bytes: Int?,
        start: UInt64,
        connection: UInt64
    ) {
        guard let accessLog else { return }
        let end = DispatchTimeNow.nanoseconds()
        let entry = AccessLogFormatter.Entry(
            method: method,
            path: route == nil ? path : nil,  // the route's pattern is written instead
            route: route,
            status: status,
            bytes: bytes,
            durationMicroseconds: start == 0 || end < start ? 0 : (end - start) / 1000,
            connection: connection
        )
        accessLog.record(entry, router: router)
    }
}
