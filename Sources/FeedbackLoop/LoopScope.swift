/// A view of a loop scoped to a sub-state and sub-events: it reads the part of the state it is scoped to,
/// sends its local events embedded into the loop's events, and observes only its part.
///
/// Concurrency: a scope holds only Sendable closures over the loop; every call follows the loop's contract.
public struct LoopScope<State: Sendable, Event: Sendable>: Sendable {
    private let read: @Sendable () -> State
    private let write: @Sendable (Event) -> Void
    private let watch:
        @Sendable (
            _ body: @escaping @Sendable (State) -> Void,
            _ finish: (@Sendable () -> Void)?
        ) -> Observation

    init(
        read: @escaping @Sendable () -> State,
        write: @escaping @Sendable (Event) -> Void,
        watch: @escaping @Sendable (@escaping @Sendable (State) -> Void, (@Sendable () -> Void)?) -> Observation
    ) {
        self.read = read
        self.write = write
        self.watch = watch
    }

    /// The current local state.
    public var state: State { read() }

    /// Sends a local event to the loop.
    public func send(_ event: Event) { write(event) }

    /// Calls `body` with the current local state, then with the local state of every later step.
    @discardableResult
    public func observe(_ body: @escaping @Sendable (State) -> Void) -> Observation { watch(body, nil) }

    /// The local states, the current one first; conflating, finishing when the loop stops.
    public var states: AsyncStream<State> {
        let (stream, continuation) = AsyncStream.makeStream(of: State.self, bufferingPolicy: .bufferingNewest(1))
        let observation = watch({ continuation.yield($0) }, { continuation.finish() })
        continuation.onTermination = { _ in observation.cancel() }
        return stream
    }

    /// A narrower scope of this scope.
    public func scoped<Local: Sendable, LocalEvent: Sendable>(
        to state: @escaping @Sendable (State) -> Local,
        event: @escaping @Sendable (LocalEvent) -> Event
    ) -> LoopScope<Local, LocalEvent> {
        let read = self.read
        let write = self.write
        let watch = self.watch
        return LoopScope<Local, LocalEvent>(
            read: { state(read()) },
            write: { write(event($0)) },
            watch: { body, finish in watch({ body(state($0)) }, finish) }
        )
    }
}

extension Loop {
    /// This loop scoped to a sub-state and sub-events (Loop's `scoped(to:event:)`).
    public func scoped<Local: Sendable, LocalEvent: Sendable>(
        to state: @escaping @Sendable (State) -> Local,
        event: @escaping @Sendable (LocalEvent) -> Event
    ) -> LoopScope<Local, LocalEvent> {
        LoopScope<Local, LocalEvent>(
            read: { state(self.state) },
            write: { self.send(event($0)) },
            watch: { body, finish in self.observe({ body(state($0.state)) }, finish: finish) }
        )
    }
}
