/// A pure reducer `(inout State, Event) -> Void` that composes: a child's reducer can be pulled back into a
/// parent's state and events, and reducers of one system can be combined. Stateless, hence `Sendable`.
public struct Reducer<State, Event>: Sendable {
    /// The reducing function.
    public let reduce: @Sendable (inout State, Event) -> Void

    /// Wraps a reducing function.
    public init(_ reduce: @escaping @Sendable (inout State, Event) -> Void) {
        self.reduce = reduce
    }

    /// Runs every reducer, in order, on each event.
    public static func combine(_ reducers: Reducer...) -> Reducer {
        Reducer { state, event in
            for reducer in reducers { reducer.reduce(&state, event) }
        }
    }

    /// Lifts this reducer into a parent: it reduces the parent's events that `event` extracts into the part of
    /// the parent's state at `state`, and ignores the others.
    public func pullback<Parent, ParentEvent>(
        state: any WritableKeyPath<Parent, State> & Sendable,
        event: @escaping @Sendable (ParentEvent) -> Event?
    ) -> Reducer<Parent, ParentEvent> {
        let reduce = self.reduce
        return Reducer<Parent, ParentEvent> { parent, parentEvent in
            guard let event = event(parentEvent) else { return }
            reduce(&parent[keyPath: state], event)
        }
    }
}
