/// The per-loop instance of a feedback: `react` sees every step, `stop` cancels what it runs.
///
/// Concurrency: both are called only by the loop's engine owner, one call at a time.
@usableFromInline
struct Reactor<State: Sendable, Event: Sendable>: Sendable {
    @usableFromInline
    let react: @Sendable (State, Event?, EventSink<Event>) -> Void
    @usableFromInline
    let stop: @Sendable () -> Void

    @inlinable
    init(
        react: @escaping @Sendable (State, Event?, EventSink<Event>) -> Void,
        stop: @escaping @Sendable () -> Void
    ) {
        self.react = react
        self.stop = stop
    }
}

/// A feedback: it watches a loop's states and emits events, usually by running effects.
///
/// A `Feedback` is a description, shared by any number of loops; each loop attaches its own instance, so
/// cancellation is scoped to one loop. Effects run in `Task`s; cancellation is Task cancellation; an effect's
/// error becomes an event through the feedback's `onError` mapping (or is dropped), it never stops the loop.
public struct Feedback<State: Sendable, Event: Sendable>: Sendable {
    @usableFromInline
    let attach: @Sendable () -> Reactor<State, Event>

    @inlinable
    init(attach: @escaping @Sendable () -> Reactor<State, Event>) {
        self.attach = attach
    }

    /// A synchronous feedback over every (state, event) step (not the initial state): `body` runs on the
    /// engine owner's thread right after the reduce; events it sends through the sink are queued.
    public static func middleware(
        _ body: @escaping @Sendable (_ state: State, _ event: Event, _ sink: EventSink<Event>) -> Void
    ) -> Feedback {
        Feedback {
            Reactor(
                react: { state, event, sink in
                    if let event { body(state, event, sink) }
                },
                stop: {}
            )
        }
    }

    /// A custom feedback over the raw stream of states (the initial one first, then one per reduce, unbounded
    /// buffer): `transform` returns the events to send. Its events are never dropped while the loop runs.
    public static func custom<Events: AsyncSequence & Sendable>(
        onError: (@Sendable (any Error) -> Event?)? = nil,
        _ transform: @escaping @Sendable (AsyncStream<State>) -> Events
    ) -> Feedback where Events.Element == Event {
        Feedback {
            let runner = StreamRunner<State, Event>()
            return Reactor(
                react: { state, _, sink in
                    runner.yield(state, sink: sink) { states, emit in
                        for try await event in transform(states) { emit(event) }
                    } onError: {
                        onError?($0)
                    }
                },
                stop: { runner.stop() }
            )
        }
    }

    /// An input from an external source: the loop sends every element of `source` as an event, from its first
    /// step until the source ends or the loop stops.
    public static func input<Source: AsyncSequence & Sendable>(
        from source: Source,
        onError: (@Sendable (any Error) -> Event?)? = nil
    ) -> Feedback where Source.Element == Event {
        Feedback {
            let effect = EffectSlot<Event>()
            return Reactor(
                react: { _, _, sink in
                    guard !effect.started else { return }
                    effect.started = true
                    effect.launch(sink: sink, onError: onError) { emit in
                        for try await event in source { emit(event) }
                    }
                },
                stop: { effect.cancel() }
            )
        }
    }

    /// Lifts this feedback into a parent system: it sees `state(parent)`, the parent events that `event`
    /// extracts (nil for the others), and its events are embedded with `embed`.
    public func pullback<Parent: Sendable, ParentEvent: Sendable>(
        state: @escaping @Sendable (Parent) -> State,
        event: @escaping @Sendable (ParentEvent) -> Event? = { _ in nil },
        embed: @escaping @Sendable (Event) -> ParentEvent
    ) -> Feedback<Parent, ParentEvent> {
        let attachChild = attach
        return Feedback<Parent, ParentEvent> {
            let child = attachChild()
            let cache = SinkCache<Event, ParentEvent>(embed)
            return Reactor(
                react: { parent, parentEvent, sink in
                    child.react(state(parent), parentEvent.flatMap(event), cache.sink(over: sink))
                },
                stop: child.stop
            )
        }
    }
}

/// Keeps the mapped sink of a pulled-back feedback so that steps do not allocate.
/// Used only by the engine owner.
final class SinkCache<Child: Sendable, Parent: Sendable>: @unchecked Sendable {
    private let embed: @Sendable (Child) -> Parent
    private var cached: MappedEventSink<Child, Parent>?

    init(_ embed: @escaping @Sendable (Child) -> Parent) { self.embed = embed }

    func sink(over parent: EventSink<Parent>) -> EventSink<Child> {
        if let cached, cached.parent === parent { return cached }
        let made = MappedEventSink(unretained: parent, transform: embed)
        cached = made
        return made
    }
}

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
