public import Metrics

/// Everything a `Server` can be configured with. A plain value, read by every shard.
public struct HTTPServerConfiguration: Sendable {
    /// The IPv4 address to bind, dotted (`127.0.0.1`, `0.0.0.0`).
    public var host: String
    /// The port; 0 lets the kernel pick one (`start()` returns it).
    public var port: Int
    /// Connections served at once; one more is answered 503 and closed. `start()` lowers it to what the descriptor
    /// limit (`RLIMIT_NOFILE`) leaves after `descriptorReserve`, with a warning.
    public var maxConnections: Int
    /// Descriptors kept for everything but client connections (standard streams, the listener, epoll sets,
    /// Dispatch's own, the journal's files, upstream fetches, the spare descriptor for `EMFILE`).
    public var descriptorReserve: Int
    /// Whether `start()` first raises the soft descriptor limit to the hard one (as Go's runtime does since 1.19).
    public var raisesDescriptorLimit: Bool
    /// Shards (serial queues with an epoll set each); nil means one per usable CPU.
    public var shardCount: Int?
    /// Request-line and header limits.
    public var limits: RequestParser.Limits
    /// Longest time from a request's first byte to the end of its head.
    public var headerTimeout: Duration
    /// Longest time from the end of a request's head to the end of its body, however the bytes trickle: past it the
    /// request is answered 408 and the connection closed.
    public var bodyTimeout: Duration
    /// Bytes per second a body must average from the end of its head once `bodyRateGrace` has passed, else 408 and
    /// a close; 0 checks no rate.
    public var minBodyRate: Int
    /// How long a body may take before `minBodyRate` applies.
    public var bodyRateGrace: Duration
    /// Longest time an idle keep-alive connection stays open.
    public var idleTimeout: Duration
    /// Longest time a response may wait on a client that does not read.
    public var writeTimeout: Duration
    /// A body left unread after an early answer (404, 405) is discarded up to this size; beyond, the connection closes.
    public var maxDiscardBytes: Int
    /// A streaming response counts as slow once this many bytes wait to be sent.
    public var streamHighWaterMark: Int
    /// Listen backlog.
    public var backlog: Int
    /// Whole bodies of at least this many bytes are gzip-compressed when `Accept-Encoding` allows; nil never.
    public var compressionThreshold: Int?
    /// Whether streaming responses are gzip-compressed (one sync flush per write) when `Accept-Encoding` allows.
    public var compressStreams: Bool
    /// Where the server's counters, timer and meter are created (once, when the server is initialised); nil means
    /// the process-wide `MetricsSystem.factory`. Tests pass their own factory instead of bootstrapping the global one.
    public var metricsFactory: (any MetricsFactory)?

    /// Creates a configuration; the defaults suit a service behind a proxy.
    public init(
        host: String = "127.0.0.1",
        port: Int = 8080,
        maxConnections: Int = 10_000,
        descriptorReserve: Int = 64,
        raisesDescriptorLimit: Bool = true,
        shardCount: Int? = nil,
        limits: RequestParser.Limits = RequestParser.Limits(),
        headerTimeout: Duration = .seconds(10),
        bodyTimeout: Duration = .seconds(30),
        minBodyRate: Int = 1024,
        bodyRateGrace: Duration = .seconds(5),
        idleTimeout: Duration = .seconds(60),
        writeTimeout: Duration = .seconds(30),
        maxDiscardBytes: Int = 64 * 1024,
        streamHighWaterMark: Int = 256 * 1024,
        backlog: Int = 1024,
        compressionThreshold: Int? = 1024,
        compressStreams: Bool = true,
        metricsFactory: (any MetricsFactory)? = nil
    ) {
        self.host = host
        self.port = port
        self.maxConnections = maxConnections
        self.descriptorReserve = descriptorReserve
        self.raisesDescriptorLimit = raisesDescriptorLimit
        self.shardCount = shardCount
        self.limits = limits
        self.headerTimeout = headerTimeout
        self.bodyTimeout = bodyTimeout
        self.minBodyRate = minBodyRate
        self.bodyRateGrace = bodyRateGrace
        self.idleTimeout = idleTimeout
        self.writeTimeout = writeTimeout
        self.maxDiscardBytes = maxDiscardBytes
        self.streamHighWaterMark = streamHighWaterMark
        self.backlog = backlog
        self.compressionThreshold = compressionThreshold
        self.compressStreams = compressStreams
        self.metricsFactory = metricsFactory
    }
}

extension Duration {
    var nanoseconds: UInt64 {
        let (s, a) = components
        return UInt64(max(0, s)) * 1_000_000_000 + UInt64(max(0, a / 1_000_000_000))
    }
}
