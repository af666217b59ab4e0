package import Metrics

/// The service's own metrics, created once from the factory the application renders on `/metrics`.
package final class ServiceMetrics: Sendable {
    package let sessions: Meter
    /// The bytes every session holds, as their ``SessionBudget`` counts them.
    package let sessionBytes: Meter
    /// `sessions.max.bytes`, for alerts on the ratio of the two.
    package let sessionBytesLimit: Gauge
    package let sessionsCreated: Counter
    package let sessionsEnded: Counter
    package let sessionsExpired: Counter
    /// Passive sessions deleted by `session.retention`.
    package let sessionsRetired: Counter
    package let eventsApplied: Counter
    package let eventsRejected: Counter
    /// Sessions only in the journal: counted at start, then up at each passivation, down at each activation.
    package let sessionsPassive: Meter
    /// Sessions taken out of memory after `session.idle.ms`, their state kept in the journal.
    package let sessionsPassivated: Counter
    /// Sessions taken out of memory to make room for another under `sessions.max.active`.
    package let sessionsPassivatedForRoom: Counter
    /// Copies dropped because another replica holds the session now (found at a request, a fenced append or the
    /// ownership watch); their streams end with `event: moved`.
    package let sessionsMovedAway: Counter
    /// Passive sessions brought back into memory by a request.
    package let sessionsActivated: Counter
    /// Passive sessions brought back into memory because a durable timer of theirs came due.
    package let sessionsWoken: Counter
    /// Sessions with a pending durable-timer deadline (the journal's index).
    package let timersPending: Gauge
    /// How long an activated session's first upstream fetch waited for its turn (`session.activation.rate`).
    package let activationFetchWait: Timer
    /// How long an activation took: the journal read, the decode and fold, the loop's start.
    package let activationDuration: Timer
    /// Every reduce of every session's loop.
    package let reduceDuration: Timer
    /// 1 when the sessions run on a clock that tests move (`--clock manual` or `skip`), else 0.
    package let clockManual: Gauge
    /// The manual clock's time, in seconds since 1970 (set at start and after each advance).
    package let clockNow: Gauge

    package init(factory: any MetricsFactory) {
        /// A counter of `label` with one dimension: the many `name{key="value"}` series of this service.
        func counter(_ label: String, _ key: String, _ value: String) -> Counter {
            Counter(label: label, dimensions: [(key, value)], factory: factory)
        }
        sessions = Meter(label: "feedbackhost_sessions", dimensions: [], factory: factory)
        sessionBytes = Meter(label: "feedbackhost_sessions_bytes", dimensions: [], factory: factory)
        sessionBytesLimit = Gauge(label: "feedbackhost_sessions_bytes_limit", dimensions: [], factory: factory)
        sessionsCreated = Counter(label: "feedbackhost_sessions_created_total", dimensions: [], factory: factory)
        sessionsEnded = counter("feedbackhost_sessions_ended_total", "reason", "deleted")
        sessionsExpired = counter("feedbackhost_sessions_ended_total", "reason", "expired")
        sessionsRetired = counter("feedbackhost_sessions_ended_total", "reason", "retention")
        eventsApplied = counter("feedbackhost_events_total", "outcome", "applied")
        eventsRejected = counter("feedbackhost_events_total", "outcome", "rejected")
        sessionsPassive = Meter(label: "feedbackhost_sessions_passive", dimensions: [], factory: factory)
        sessionsPassivated = counter("feedbackhost_session_passivations_total", "reason", "idle")
        sessionsPassivatedForRoom = counter("feedbackhost_session_passivations_total", "reason", "capacity")
        sessionsMovedAway = Counter(label: "feedbackhost_sessions_moved_away_total", dimensions: [], factory: factory)
        sessionsActivated = counter("feedbackhost_session_activations_total", "reason", "request")
        sessionsWoken = counter("feedbackhost_session_activations_total", "reason", "timer")
        timersPending = Gauge(label: "feedbackhost_timers_pending", dimensions: [], factory: factory)
        activationDuration = Timer(
            label: "feedbackhost_session_activation_duration_seconds",
            dimensions: [],
            factory: factory
        )
        activationFetchWait = Timer(
            label: "feedbackhost_activation_fetch_wait_seconds",
            dimensions: [],
            factory: factory
        )
        reduceDuration = Timer(label: "feedbackhost_reduce_duration_seconds", dimensions: [], factory: factory)
        clockManual = Gauge(label: "feedbackhost_clock_manual", dimensions: [], factory: factory)
        clockNow = Gauge(label: "feedbackhost_clock_manual_time_seconds", dimensions: [], factory: factory)
    }
}
