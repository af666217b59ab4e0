package import FeedbackLoop

/// How the host contains a system that misbehaves (docs/SYSTEMS.md, "What the host protects against"): the budget
/// of events its feedbacks may send, the time one reduce may take before it is reported, and how many such reduces
/// move a session's steps off the server's threads. The defaults are far from what a healthy system does.
///
/// A value type.
package struct ContainmentPolicy: Sendable, Equatable {
    /// The feedbacks' budget of every session; nil for none.
    package var effectBudget: EffectBudget?
    /// A reduce that takes longer is reported: logged with the session, the event and the time, and counted.
    package var slowReduce: Duration
    /// After this many slow reduces a session's steps run on the slow lane, never on a server thread again (while
    /// it stays in memory).
    package var slowReducesBeforeOffload: Int

    package init(effectBudget: EffectBudget?, slowReduce: Duration, slowReducesBeforeOffload: Int) {
        self.effectBudget = effectBudget
        self.slowReduce = slowReduce
        self.slowReducesBeforeOffload = max(slowReducesBeforeOffload, 1)
    }

    /// 1,000 feedback events a second (2,000 at once), a runaway after 10 seconds over that; a reduce over 100 ms is
    /// slow, and the second moves the session to the slow lane.
    package static let standard = ContainmentPolicy(
        effectBudget: EffectBudget(eventsPerSecond: 1_000, burst: 2_000, runawayAfter: .seconds(10)),
        slowReduce: .milliseconds(100),
        slowReducesBeforeOffload: 2
    )
}
