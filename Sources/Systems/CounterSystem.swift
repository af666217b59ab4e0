public import FeedbackLoop
public import SystemKit

/// The counter from the seeds: increment, decrement, add an amount. No effects.
///
/// The count saturates at `Int.min` and `Int.max`: a reducer is total, so an overflowing `add` cannot crash it.
public struct CounterSystem: FeedbackSystem {
    /// The counter's state.
    @FeedbackSchema
    public struct State: Codable, Equatable, Sendable {
        /// The current count.
        public var count: Int

        /// Creates a state.
        public init(count: Int = 0) { self.count = count }
    }

    /// The counter's events, all of them client events.
    @FeedbackEvent
    public enum Event: Equatable, Sendable {
        case increment
        case decrement
        case add(amount: Int)
    }

    /// Creates the counter system.
    public init() {}

    public var name: String { "counter" }
    public var summary: String { "A counter: increment, decrement, or add an amount (saturating at the Int limits)." }
    public var exampleEvents: [Event] { [.increment, .decrement, .add(amount: 5)] }
    public var initialState: State { State() }

    public static func reduce(_ state: inout State, _ event: Event) {
        switch event {
        case .increment: state.count = state.count.saturatingAdding(1)
        case .decrement: state.count = state.count.saturatingAdding(-1)
        case .add(let amount): state.count = state.count.saturatingAdding(amount)
        }
    }

    public func feedbacks(_ environment: SystemEnvironment) -> [Feedback<State, Event>] { [] }
}
