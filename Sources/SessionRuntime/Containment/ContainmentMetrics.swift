package import Metrics

/// The containment's counters (`/metrics`): feedbacks throttled and stopped, slow reduces, sessions offloaded.
package final class ContainmentMetrics: Sendable {
    /// Times a session's feedbacks began to wait for their budget.
    package let throttled: Counter
    /// Times a session's feedbacks were stopped as a runaway.
    package let stopped: Counter
    /// Times stopped feedbacks were started again by an admin.
    package let resumed: Counter
    /// Reduces that took longer than the policy's limit.
    package let slowReduces: Counter
    /// Sessions whose steps moved to the slow lane.
    package let offloaded: Counter

    package init(factory: any MetricsFactory) {
        func counter(_ label: String, _ value: String) -> Counter {
            Counter(label: label, dimensions: [("outcome", value)], factory: factory)
        }
        throttled = counter("feedbackhost_feedback_budget_total", "throttled")
        stopped = counter("feedbackhost_feedback_budget_total", "stopped")
        resumed = counter("feedbackhost_feedback_budget_total", "resumed")
        slowReduces = Counter(label: "feedbackhost_slow_reduces_total", dimensions: [], factory: factory)
        offloaded = Counter(label: "feedbackhost_sessions_offloaded_total", dimensions: [], factory: factory)
    }
}
