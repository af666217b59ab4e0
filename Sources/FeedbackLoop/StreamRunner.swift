/// Feeds a `custom` feedback's state stream; used only by the engine owner.
///
/// The stream's task starts immediately with the initial state already buffered, so it reacts to it before the
/// loop reduces anything. Each later state is yielded through the task's ``ReactionExecutor``: when the task is
/// waiting for it, it reacts on the engine owner's thread, in the step, before the next reduce. A task busy
/// elsewhere (suspended on something else) finds the state in the stream's buffer (unbounded) when it comes back.
/// With an effect tracker, the task's waiting for the next state counts as idle (``LoopFeed``).
final class StreamRunner<State: Sendable, Event: Sendable>: @unchecked Sendable {
    private var feed: LoopFeed<State>?
    private let effect = EffectSlot<Event>()
    /// Made at the launch, over the sink's effect executor.
    private var executor: ReactionExecutor?

    func yield(
        _ state: State,
        sink: EventSink<Event>,
        body: @escaping @Sendable (AsyncStream<State>, Emitter<Event>) async throws -> Void,
        onError: @escaping @Sendable (any Error) -> Event?
    ) {
        if let feed, let executor {
            executor.deliver { feed.yield(state) }
            return
        }
        guard !effect.started else { return }
        let feed = LoopFeed<State>(tracker: sink.effectTracker)
        let stream = feed.makeStream()
        self.feed = feed
        feed.yield(state)
        effect.started = true
        let executor = ReactionExecutor(fallback: sink.effectExecutor)
        self.executor = executor
        effect.launch(sink: sink, executor: executor, onError: onError) { emit in try await body(stream, emit) }
    }

    func stop() {
        feed?.finish()
        feed = nil
        effect.cancel()
    }
}
