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
