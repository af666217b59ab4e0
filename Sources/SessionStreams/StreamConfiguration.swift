/// Limits and timings of the session streams (`GET /v1/sessions/{id}/stream`). An immutable value.
public struct StreamConfiguration: Sendable {
    /// A comment is sent to a subscriber that got nothing for this long.
    public var heartbeat: Duration
    /// Open streams one session serves at most; past it a new one gets 200, `retry:` and a close.
    public var maxPerSession: Int
    /// Open streams the server serves at most; past it, the same answer.
    public var maxTotal: Int
    /// On shutdown, open streams are closed at times spread over this window, so clients do not all reconnect
    /// at once.
    public var drainWindow: Duration
    /// The reconnection time sent as `retry:`; each stream gets it plus a random part of up to half of it.
    public var retry: Duration
    /// How long a session's streams keep following its states after the last subscriber left: a client that
    /// reconnects within it resumes with a patch; later, with a snapshot. Nobody watching, nothing is encoded.
    public var linger: Duration
    /// Streams of one frame handed to the shards at once while a state's fan-out is prepared: the shards send the
    /// first ones while the rest are (with 10,000 subscribers preparing takes a few milliseconds).
    public var writePart: Int

    /// Creates a configuration.
    public init(
        heartbeat: Duration = .seconds(15),
        maxPerSession: Int = 10_000,
        maxTotal: Int = 50_000,
        drainWindow: Duration = .seconds(5),
        retry: Duration = .seconds(2),
        linger: Duration = .seconds(30),
        writePart: Int = 1024
    ) {
        self.heartbeat = heartbeat
        self.maxPerSession = maxPerSession
        self.maxTotal = maxTotal
        self.drainWindow = drainWindow
        self.retry = retry
        self.linger = linger
        self.writePart = max(writePart, 1)
    }

    /// The `retry:` value for one stream, in milliseconds, with its jitter.
    package func retryWithJitter() -> Int {
        let base = max(retry.wholeNanoseconds / 1_000_000, 0)
        return base + Int.random(in: 0...max(base / 2, 0))
    }
}

extension Duration {
    /// The duration in whole nanoseconds (negative durations give 0).
    var wholeNanoseconds: Int {
        let (seconds, attoseconds) = components
        return max(0, Int(seconds) * 1_000_000_000 + Int(attoseconds / 1_000_000_000))
    }
}
