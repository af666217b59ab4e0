package import Metrics

/// The stream metrics, created once from the application's factory; handles are cached, and the hub adds the
/// counts of a whole fan-out at once.
package final class StreamMetrics: Sendable {
    /// Why a stream ended, as the `reason` label of `feedbackhost_stream_closes_total`.
    package enum CloseReason: String, CaseIterable, Sendable {
        /// The client went away.
        case client
        /// No write progress for the stall timeout.
        case stalled
        /// The session was deleted.
        case deleted
        /// The session expired.
        case expired
        /// The session left this replica (`event: moved`): another replica holds it now, or it was re-anchored.
        case moved
        /// The server is shutting down.
        case shutdown
        /// The stream's token expired (`event: reauth`).
        case tokenExpired = "token_expired"
        /// Refused at once: the session's stream limit.
        case sessionLimit = "session_limit"
        /// Refused at once: the server's stream limit.
        case totalLimit = "total_limit"
        /// Refused at once: the server is draining.
        case draining
    }

    let open: Meter
    /// Sessions whose states the streams follow (subscribers now, or within the linger).
    let following: Meter
    let events: Counter
    let bytes: Counter
    let conflations: Counter
    let heartbeats: Counter
    private let resumes: [ResumeOutcome: Counter]
    private let closes: [CloseReason: Counter]

    package init(factory: any MetricsFactory) {
        open = Meter(label: "feedbackhost_streams", dimensions: [], factory: factory)
        following = Meter(label: "feedbackhost_stream_sessions", dimensions: [], factory: factory)
        events = Counter(label: "feedbackhost_stream_events_total", dimensions: [], factory: factory)
        bytes = Counter(label: "feedbackhost_stream_bytes_total", dimensions: [], factory: factory)
        conflations = Counter(label: "feedbackhost_stream_conflations_total", dimensions: [], factory: factory)
        heartbeats = Counter(label: "feedbackhost_stream_heartbeats_total", dimensions: [], factory: factory)
        var resumes: [ResumeOutcome: Counter] = [:]
        for outcome in ResumeOutcome.allCases {
            resumes[outcome] = Counter(
                label: "feedbackhost_stream_resumes_total",
                dimensions: [("outcome", outcome.rawValue)],
                factory: factory
            )
        }
        self.resumes = resumes
        var closes: [CloseReason: Counter] = [:]
        for reason in CloseReason.allCases {
            closes[reason] = Counter(
                label: "feedbackhost_stream_closes_total",
                dimensions: [("reason", reason.rawValue)],
                factory: factory
            )
        }
        self.closes = closes
    }

    func resumed(_ outcome: ResumeOutcome) { resumes[outcome]?.increment() }

    package func closed(_ reason: CloseReason, count: Int = 1) {
        guard count > 0 else { return }
        closes[reason]?.increment(by: count)
    }

    /// Counts `events` events (or comments) of `bytes` bytes in all, sent in one go.
    package func sent(events: Int, bytes: Int) {
        if events > 0 { self.events.increment(by: events) }
        if bytes > 0 { self.bytes.increment(by: bytes) }
    }
}
