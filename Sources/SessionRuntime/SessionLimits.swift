/// The runtime's limits and timings: the part of the service's configuration (`ServiceConfiguration`) that sessions,
/// activation, the idle sweep, the timer waker and retention read. An immutable value.
package struct SessionLimits: Sendable {
    /// `Idempotency-Key`s each session remembers (the oldest are forgotten first); the journal keeps as many.
    package static let idempotencyKeysPerSession = 256
    /// Sessions the server holds in memory at most (`sessions.max.active`).
    package var maxActiveSessions: Int
    /// The memory all sessions may hold together, in bytes (`sessions.max.bytes`).
    package var maxSessionBytes: Int
    /// The largest encoded state one session may hold, in bytes (`session.state.max.bytes`).
    package var maxStateBytes: Int
    /// Client events a session holds waiting for its reducer; past it, a post is 429.
    package var inboxCapacity: Int
    /// A session unused for this long is passivated (with a journal) or ends (without).
    package var sessionIdle: Duration
    /// Passive sessions the timer waker activates a second at most (0: no bound).
    package var wakeRate: Int
    /// Activated sessions whose first upstream fetch may start a second, at most (0: no bound).
    package var activationRate: Int
    /// A passive session unused for this long is deleted from the journal; nil keeps it forever.
    package var retention: Duration?
    /// Clients whose numbered posts each session remembers (`session.clients.max`); past it, the least recently
    /// active is forgotten.
    package var clientsPerSession = 256
    /// How a misbehaving system is contained: its feedbacks' budget, slow reduces.
    package var containment: ContainmentPolicy = .standard

    package init(
        maxActiveSessions: Int,
        maxSessionBytes: Int,
        maxStateBytes: Int,
        inboxCapacity: Int,
        sessionIdle: Duration,
        wakeRate: Int,
        activationRate: Int,
        retention: Duration?
    ) {
        self.maxActiveSessions = maxActiveSessions
        self.maxSessionBytes = maxSessionBytes
        self.maxStateBytes = maxStateBytes
        self.inboxCapacity = inboxCapacity
        self.sessionIdle = sessionIdle
        self.wakeRate = wakeRate
        self.activationRate = activationRate
        self.retention = retention
    }
}
