/// One step of a loop: the event that was reduced (nil for the initial state), the state it produced and the
/// loop's revision after it (0 for the initial state, then one more per reduce).
public struct Step<State: Sendable, Event: Sendable>: Sendable {
    /// The reduced event; nil for the initial state.
    public let event: Event?
    /// The state after the event.
    public let state: State
    /// Monotonically increasing, one per reduce; 0 is the initial state.
    public let revision: UInt64
    /// The position of the feedback whose event this is (``Loop/feedbackName(at:)`` names it), when the loop knows:
    /// a loop with an ``EffectBudget`` tags each feedback's events. Nil for a client's event and the initial state.
    public let feedback: Int?

    /// Creates a step.
    @inlinable
    public init(event: Event?, state: State, revision: UInt64, feedback: Int? = nil) {
        self.event = event
        self.state = state
        self.revision = revision
        self.feedback = feedback
    }
}
