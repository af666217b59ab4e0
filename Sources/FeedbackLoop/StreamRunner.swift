/// Feeds a custom feedback's state stream; used only by the engine owner.
final class StreamRunner<State: Sendable, Event: Sendable>: @unchecked Sendable {
    private var continuation: AsyncStream<State>.Continuation?
    private let effect = EffectSlot<Event>()

    func yield(
        _ state: State,
        sink: EventSink<Event>,
        body: @escaping @Sendable (AsyncStream<State>, Emitter<Event>) async throws -> Void,
        onError: @escaping @Sendable (any Error) -> Event?
    ) {
        if continuation == nil, !effect.started {
            let (stream, continuation) = AsyncStream.makeStream(of: State.self)
            self.continuation = continuation
            effect.started = true
            effect.launch(sink: sink, onError: onError) { emit in try await body(stream, emit) }
        }
        continuation?.yield(state)
    }

    func stop() {
        continuation?.finish()
        continuation = nil
        effect.cancel()
    }
}
