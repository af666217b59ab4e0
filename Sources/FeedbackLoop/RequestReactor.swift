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
    // Only the engine owner touches these: no dynamic exclusivity checks on the hot path.
    @usableFromInline
    @exclusivity(unchecked)
    var current: Request?
    @usableFromInline
    @exclusivity(unchecked)
    var ticket: EffectTicket?

    @inlinable
    init(spec: RequestSpec<State, Event, Request>) {
        self.spec = spec
    }

    /// A step (with a sink) or the loop's stop (nil sink). The sink is not unwrapped on the idle path, which
    /// would cost a retain.
    @inlinable
    func react(_ state: UnsafePointer<State>, sink: EventSink<Event>?) {
        guard sink != nil else { return stop() }
        let next = spec.request(state.pointee)
        if next == current { return }
        changeRequest(to: next, sink: sink.unsafelyUnwrapped)
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
