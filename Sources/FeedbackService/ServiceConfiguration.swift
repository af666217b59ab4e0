/// The service's limits and policies. An immutable value.
public struct ServiceConfiguration: Sendable {
    /// `Idempotency-Key`s each session remembers (the oldest are forgotten first); the journal keeps as many.
    public static let idempotencyKeysPerSession = 256
    /// Sessions the server holds at most; past it, creating one is 503.
    public var maxSessions: Int
    /// The largest event body accepted, in bytes (413 above).
    public var maxEventBodyBytes: Int
    /// Events one POST may carry.
    public var maxEventsPerBatch: Int
    /// Client events a session holds waiting for its reducer; past it, a post is 429.
    public var inboxCapacity: Int
    /// Which origins browsers may call from.
    public var cors: CORSPolicy
    /// A session nobody reads or posts to for this long ends and is freed.
    public var sessionIdleTTL: Duration
    /// Limits and timings of the session streams.
    public var streams: StreamConfiguration
    /// Tokens per session and scope (`--auth jwt`); nil: off, anyone who knows an id may do anything with it.
    public var auth: AuthConfiguration?

    /// Creates a configuration.
    public init(
        maxSessions: Int = 100_000,
        maxEventBodyBytes: Int = 64 * 1024,
        maxEventsPerBatch: Int = 100,
        inboxCapacity: Int = 1000,
        cors: CORSPolicy = CORSPolicy(),
        sessionIdleTTL: Duration = .seconds(3600),
        streams: StreamConfiguration = StreamConfiguration()
    ) {
        self.streams = streams
        self.sessionIdleTTL = sessionIdleTTL
        self.inboxCapacity = max(inboxCapacity, maxEventsPerBatch)
        self.maxSessions = maxSessions
        self.maxEventBodyBytes = maxEventBodyBytes
        self.maxEventsPerBatch = maxEventsPerBatch
        self.cors = cors
    }
}
