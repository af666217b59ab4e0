/// What a `react(request:)` feedback shares between every loop that uses it.
@usableFromInline
final class RequestSpec<State: Sendable, Event: Sendable, Request: Equatable & Sendable>: Sendable {
    @usableFromInline
    let request: @Sendable (State) -> Request?
    @usableFromInline
    let run: @Sendable (Request, Emitter<Event>) async throws -> Void
    @usableFromInline
    let onError: (@Sendable (any Error) -> Event?)?

    @inlinable
    init(
        request: @escaping @Sendable (State) -> Request?,
        run: @escaping @Sendable (Request, Emitter<Event>) async throws -> Void,
        onError: (@Sendable (any Error) -> Event?)?
    ) {
        self.request = request
        self.run = run
        self.onError = onError
    }
}

/// One loop's `react(request:)` instance: the current request and its effect.
///
/// Concurrency: touched only by the loop's engine owner. An unchanged request costs one `==` and no allocation.
@usableFromInline
final class RequestReactor<State: Sendable, Event: Sendable, Request: Equatable & Sendable>: @unchecked Sendable {
    @usableFromInline
    let spec: RequestSpec<State, Event, Request>
    @usableFromInline
    var current: Request?
    @usableFromInline
    var ticket: EffectTicket?

    @inlinable
    init(spec: RequestSpec<State, Event, Request>) {
        self.spec = spec
    }

    @inlinable
    func react(_ state: State, sink: EventSink<Event>) {
        let next = spec.request(state)
        if next == current { return }
        changeRequest(to: next, sink: sink)
    }

    @usableFromInline
    func changeRequest(to next: Request?, sink: EventSink<Event>) {
        ticket?.cancel()
        ticket = nil
        current = next
        guard let next else { return }
        let run = spec.run
        ticket = launchEffect(sink: sink, onError: spec.onError) { emit in try await run(next, emit) }
    }

    @usableFromInline
    func stop() {
        ticket?.cancel()
        ticket = nil
    }
}

/// One loop's instance of `firstValueAfterNil` / `whenBecomesTrue`: an effect starts when the value goes from
/// nil to non-nil and is cancelled when it goes back to nil. Touched only by the engine owner.
final class FirstValueReactor<State: Sendable, Event: Sendable, Value: Sendable>: @unchecked Sendable {
    private let transform: @Sendable (State) -> Value?
    private let run: @Sendable (Value, Emitter<Event>) async throws -> Void
    private let onError: (@Sendable (any Error) -> Event?)?
    private let effect = EffectSlot<Event>()
    private var active = false

    init(
        transform: @escaping @Sendable (State) -> Value?,
        run: @escaping @Sendable (Value, Emitter<Event>) async throws -> Void,
        onError: (@Sendable (any Error) -> Event?)?
    ) {
        self.transform = transform
        self.run = run
        self.onError = onError
    }

    func react(_ state: State, sink: EventSink<Event>) {
        let value = transform(state)
        switch (value, active) {
        case (let value?, false):
            active = true
            let run = self.run
            effect.launch(sink: sink, onError: onError) { emit in try await run(value, emit) }
        case (nil, true):
            active = false
            effect.cancel()
        default:
            break
        }
    }

    func stop() { effect.cancel() }
}
