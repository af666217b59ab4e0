extension Feedback {
    /// Runs `effect` for the current non-nil `request(state)`. A new, different request cancels the running
    /// effect (its queued events are dropped) and starts a new one; nil cancels. An unchanged request costs one
    /// `==` and no allocation.
    @inlinable
    public static func react<Request: Equatable & Sendable>(
        request: @escaping @Sendable (State) -> Request?,
        onError: (@Sendable (any Error) -> Event?)? = nil,
        effect: @escaping @Sendable (Request) async throws -> Event?
    ) -> Feedback {
        reacting(request: request, onError: onError) { request, emit in
            if let event = try await effect(request) { emit(event) }
        }
    }

    /// Like `react(request:effect:)`, with an effect that is an async sequence of events.
    @inlinable
    public static func react<Request: Equatable & Sendable, Events: AsyncSequence & SendableMetatype>(
        request: @escaping @Sendable (State) -> Request?,
        onError: (@Sendable (any Error) -> Event?)? = nil,
        effects: @escaping @Sendable (Request) -> Events
    ) -> Feedback where Events.Element == Event {
        reacting(request: request, onError: onError) { request, emit in
            try await emit.forward(effects(request))
        }
    }

    @inlinable
    static func reacting<Request: Equatable & Sendable>(
        request: @escaping @Sendable (State) -> Request?,
        onError: (@Sendable (any Error) -> Event?)?,
        run: @escaping @Sendable (Request, Emitter<Event>) async throws -> Void
    ) -> Feedback {
        let spec = RequestSpec(request: request, run: run, onError: onError)
        return Feedback {
            let reactor = RequestReactor(spec: spec)
            return { state, _, sink in reactor.react(state.assumingMemoryBound(to: State.self), sink: sink) }
        }
    }

    /// The most general form: `requests(state)` maps IDs to requests. An ID's effect starts once, with its
    /// request and a stream of that request's later values (conflating); a new value for a running ID is pushed
    /// into that stream; an ID that disappears cancels its effect and drops its queued events.
    public static func react<
        ID: Hashable & Sendable,
        Request: Equatable & Sendable,
        Events: AsyncSequence & SendableMetatype
    >(
        requests: @escaping @Sendable (State) -> [ID: Request],
        onError: (@Sendable (any Error) -> Event?)? = nil,
        effects: @escaping @Sendable (_ initial: Request, _ updates: AsyncStream<Request>) -> Events
    ) -> Feedback where Events.Element == Event {
        Feedback {
            let reactor = KeyedReactor<State, Event, ID, Request>(
                requests: requests,
                run: { request, updates, emit in
                    try await emit.forward(effects(request, updates))
                },
                onError: onError
            )
            return { state, _, sink in
                if let sink { reactor.react(state.value(State.self), sink: sink) } else { reactor.stop() }
            }
        }
    }

    /// One effect per element of `requests(state)`: started when the element appears, cancelled when it goes.
    public static func react<Request: Hashable & Sendable>(
        requests: @escaping @Sendable (State) -> Set<Request>,
        onError: (@Sendable (any Error) -> Event?)? = nil,
        effect: @escaping @Sendable (Request) async throws -> Event?
    ) -> Feedback {
        reactingToSet(requests: requests, onError: onError) { request, emit in
            if let event = try await effect(request) { emit(event) }
        }
    }

    /// Like `react(requests:effect:)` over a `Set`, with effects that are async sequences of events.
    public static func react<Request: Hashable & Sendable, Events: AsyncSequence & SendableMetatype>(
        requests: @escaping @Sendable (State) -> Set<Request>,
        onError: (@Sendable (any Error) -> Event?)? = nil,
        effects: @escaping @Sendable (Request) -> Events
    ) -> Feedback where Events.Element == Event {
        reactingToSet(requests: requests, onError: onError) { request, emit in
            try await emit.forward(effects(request))
        }
    }

    static func reactingToSet<Request: Hashable & Sendable>(
        requests: @escaping @Sendable (State) -> Set<Request>,
        onError: (@Sendable (any Error) -> Event?)?,
        run: @escaping @Sendable (Request, Emitter<Event>) async throws -> Void
    ) -> Feedback {
        Feedback {
            let reactor = SetReactor(requests: requests, run: run, onError: onError)
            return { state, _, sink in
                if let sink { reactor.react(state.value(State.self), sink: sink) } else { reactor.stop() }
            }
        }
    }

    /// Starts `effect` with the state at which `predicate` goes from false to true; the effect is cancelled when
    /// the predicate becomes false again.
    public static func whenBecomesTrue(
        _ predicate: @escaping @Sendable (State) -> Bool,
        onError: (@Sendable (any Error) -> Event?)? = nil,
        effect: @escaping @Sendable (State) async throws -> Event?
    ) -> Feedback {
        firstValueAfterNil({ predicate($0) ? $0 : nil }, onError: onError, effect: effect)
    }

    /// Like `whenBecomesTrue(_:effect:)`, with an effect that is an async sequence of events.
    public static func whenBecomesTrue<Events: AsyncSequence & SendableMetatype>(
        _ predicate: @escaping @Sendable (State) -> Bool,
        onError: (@Sendable (any Error) -> Event?)? = nil,
        effects: @escaping @Sendable (State) -> Events
    ) -> Feedback where Events.Element == Event {
        firstValueAfterNil({ predicate($0) ? $0 : nil }, onError: onError, effects: effects)
    }

    /// Starts `effect` with the first non-nil value of `transform(state)` after nil (later non-nil values do not
    /// restart it); the effect is cancelled when the value goes back to nil.
    public static func firstValueAfterNil<Value: Sendable>(
        _ transform: @escaping @Sendable (State) -> Value?,
        onError: (@Sendable (any Error) -> Event?)? = nil,
        effect: @escaping @Sendable (Value) async throws -> Event?
    ) -> Feedback {
        reactingToFirstValue(transform, onError: onError) { value, emit in
            if let event = try await effect(value) { emit(event) }
        }
    }

    /// Like `firstValueAfterNil(_:effect:)`, with an effect that is an async sequence of events.
    public static func firstValueAfterNil<Value: Sendable, Events: AsyncSequence & SendableMetatype>(
        _ transform: @escaping @Sendable (State) -> Value?,
        onError: (@Sendable (any Error) -> Event?)? = nil,
        effects: @escaping @Sendable (Value) -> Events
    ) -> Feedback where Events.Element == Event {
        reactingToFirstValue(transform, onError: onError) { value, emit in
            try await emit.forward(effects(value))
        }
    }

    static func reactingToFirstValue<Value: Sendable>(
        _ transform: @escaping @Sendable (State) -> Value?,
        onError: (@Sendable (any Error) -> Event?)?,
        run: @escaping @Sendable (Value, Emitter<Event>) async throws -> Void
    ) -> Feedback {
        Feedback {
            let reactor = FirstValueReactor(transform: transform, run: run, onError: onError)
            return { state, _, sink in
                if let sink { reactor.react(state.value(State.self), sink: sink) } else { reactor.stop() }
            }
        }
    }
}
