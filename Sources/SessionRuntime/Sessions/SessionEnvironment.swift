import Dispatch
import FeedbackLoop
package import Metrics
package import SystemKit

/// What the service gives a session beyond what its system sees: the system's own environment, and the timer
/// every reduce of the session's loop is measured with (`feedbackhost_reduce_duration_seconds`), and the memory
/// budget its account draws on.
///
/// A value type: safe to pass anywhere.
package struct SessionEnvironment: Sendable {
    /// Handed to the system's feedbacks.
    package var system: SystemEnvironment
    /// Times every reduce; nil leaves the reducer unwrapped.
    var reduceTimer: Timer? = nil
    /// The service's memory budget, which every session's account draws on; nil counts nothing (tests).
    var budget: SessionBudget? = nil
    /// The session's containment: its feedbacks' budget and supervisor, the judge of its reduces' time, its crash
    /// marks; nil contains nothing (tests).
    var containment: SessionGuard? = nil
    /// Counts the events of durable posts (`feedbackhost_events_total{outcome="applied"}`); nil counts nothing.
    var eventsApplied: Counter? = nil
    /// The session's effects are paused (a fork's, until a client resumes them): its loop starts with its feedbacks
    /// stopped, as a runaway's are, and its containment reports them `paused`.
    var effectsPaused = false

    package init(
        system: SystemEnvironment,
        reduceTimer: Timer? = nil,
        budget: SessionBudget? = nil,
        containment: SessionGuard? = nil,
        eventsApplied: Counter? = nil
    ) {
        self.eventsApplied = eventsApplied
        self.system = system
        self.reduceTimer = reduceTimer
        self.budget = budget
        self.containment = containment
    }

    /// Starts a loop of `system` from `state` at `revision`: its reducer timed when there is a timer, and with a
    /// containment its feedbacks under the policy's budget, its slow reduces reported and its steps marked.
    func makeLoop<System: FeedbackSystem>(
        of system: System,
        from state: System.State,
        revision: UInt64
    ) -> Loop<System.State, System.Event> {
        guard reduceTimer != nil || containment != nil || effectsPaused else {
            return system.makeLoop(from: state, revision: revision, environment: self.system)
        }
        let timer = reduceTimer
        let containment = containment
        if effectsPaused { containment?.pause() }
        // Two monotonic clock reads and one histogram update per event, under the loop's lock.
        let timed: @Sendable (inout System.State, System.Event) -> Void = { state, event in
            let start = DispatchTime.now().uptimeNanoseconds
            System.reduce(&state, event)
            let elapsed = Int64(clamping: DispatchTime.now().uptimeNanoseconds &- start)
            timer?.recordNanoseconds(elapsed)
            if let containment, containment.isSlow(elapsed) {
                containment.reducedSlowly(nanoseconds: elapsed, event: SessionGuard.describe(event))
            }
        }
        return Loop(
            initial: state,
            revision: revision,
            reduce: timed,
            feedbacks: system.feedbacks(self.system),
            effectTracker: self.system.effectTracker,
            budget: containment?.policy.effectBudget,
            supervisor: containment,
            marker: containment,
            effectExecutor: containment?.effectExecutor,
            feedbacksStopped: effectsPaused
        )
    }
}
