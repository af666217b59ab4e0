/// At most one running effect of one feedback; used only by the loop's engine owner.
@usableFromInline
final class EffectSlot<Event: Sendable>: @unchecked Sendable {
    @usableFromInline
    var ticket: EffectTicket?
    @usableFromInline
    var started = false

    @usableFromInline
    init() {}

    @usableFromInline
    func launch(
        sink: EventSink<Event>,
        executor: (any TaskExecutor)? = nil,
        onError: (@Sendable (any Error) -> Event?)?,
        _ body: @escaping @Sendable (Emitter<Event>) async throws -> Void
    ) {
        ticket?.cancel()
        ticket = launchEffect(sink: sink, executor: executor, onError: onError, body)
    }

    @usableFromInline
    func cancel() {
        ticket?.cancel()
        ticket = nil
    }
}
