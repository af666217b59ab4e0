public import SessionAuth
import SessionRuntime
public import SessionStreams

/// The service's limits and policies. An immutable value.
public struct ServiceConfiguration: Sendable {
    /// `Idempotency-Key`s each session remembers (the oldest are forgotten first); the journal keeps as many.
    public static let idempotencyKeysPerSession = SessionLimits.idempotencyKeysPerSession
    /// Sessions the server holds at most; past it, creating one is 503.
    public var maxActiveSessions: Int
    /// The memory all sessions may hold together, in bytes (`sessions.max.bytes`); past it, a create or an event that
    /// grows a state is 507. See ``SessionBudget``.
    public var maxSessionBytes: Int
    /// The largest encoded state one session may hold, in bytes (`session.state.max.bytes`); an event that would
    /// pass it is 422, a starting state past it too.
    public var maxStateBytes: Int
    /// The largest event body accepted, in bytes (413 above).
    public var maxEventBodyBytes: Int
    /// Events one POST may carry.
    public var maxEventsPerBatch: Int
    /// Client events a session holds waiting for its reducer; past it, a post is 429.
    public var inboxCapacity: Int
    /// Which origins browsers may call from.
    public var cors: CORSPolicy
    /// A session nobody reads, posts to or watches for this long is passivated (with a journal: it leaves memory
    /// and the next request for it activates it) or ends (without one).
    public var sessionIdle: Duration
    /// Passive sessions the timer waker activates a second at most (0: no bound).
    public var wakeRate: Int
    /// Activated sessions whose first upstream fetch may start a second, at most (0: no bound).
    public var activationRate: Int
    /// A passive session unused for this long is deleted from the journal; nil keeps it forever.
    public var retention: Duration?
    /// Limits and timings of the session streams.
    public var streams: StreamConfiguration
    /// Tokens per session and scope (`--auth jwt`); nil: off, anyone who knows an id may do anything with it.
    public var auth: AuthConfiguration?
    /// Whether the inspection routes answer (`--inspector`; issue 32).
    public var inspector = false
    /// Clients whose numbered posts each session remembers (`session.clients.max`); a new one past it makes the
    /// session forget the least recently active, whose next numbered post past 1 is then 409 `client-unknown`.
    public var clientsPerSession = 256

    /// Creates a configuration.
    public init(
        maxActiveSessions: Int = 100_000,
        maxSessionBytes: Int = 512 * 1024 * 1024,
        maxStateBytes: Int = 1024 * 1024,
        maxEventBodyBytes: Int = 64 * 1024,
        maxEventsPerBatch: Int = 100,
        inboxCapacity: Int = 1000,
        cors: CORSPolicy = CORSPolicy(),
        sessionIdle: Duration = .seconds(900),
        wakeRate: Int = 1000,
        activationRate: Int = 200,
        retention: Duration? = nil,
        streams: StreamConfiguration = StreamConfiguration()
    ) {
        self.streams = streams
        self.sessionIdle = sessionIdle
        self.wakeRate = max(0, wakeRate)
        self.activationRate = max(0, activationRate)
        self.retention = retention
        self.inboxCapacity = max(inboxCapacity, maxEventsPerBatch)
        self.maxActiveSessions = maxActiveSessions
        self.maxSessionBytes = maxSessionBytes
        self.maxStateBytes = maxStateBytes
        self.maxEventBodyBytes = maxEventBodyBytes
        self.maxEventsPerBatch = maxEventsPerBatch
        self.cors = cors
    }
}

extension ServiceConfiguration {
    /// What the session runtime reads of it.
    var limits: SessionLimits {
        var limits = SessionLimits(
            maxActiveSessions: maxActiveSessions,
            maxSessionBytes: maxSessionBytes,
            maxStateBytes: maxStateBytes,
            inboxCapacity: inboxCapacity,
            sessionIdle: sessionIdle,
            wakeRate: wakeRate,
            activationRate: activationRate,
            retention: retention
        )
        limits.clientsPerSession = clientsPerSession
        return limits
    }
}
