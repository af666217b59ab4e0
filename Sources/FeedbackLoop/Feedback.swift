/// The per-loop instance of a feedback, one closure so that a step costs one call: called with a sink for
/// every step, and once with a nil sink when the loop stops (then it cancels what it runs).
///
/// The state and the event are passed as pointers to the caller's values (`State`, `Event`) that are valid
/// during the call: a closure over a generic value type would need a reabstraction thunk, one allocation per
/// feedback and loop and one more call per step, where raw pointers and a class need none.
/// Concurrency: called only by the loop's engine owner, one call at a time.
@usableFromInline
typealias Reactor<Event: Sendable> =
    @Sendable (
        _ state: UnsafeRawPointer, _ event: UnsafeRawPointer?, _ sink: EventSink<Event>?
    ) -> Void

extension UnsafeRawPointer {
    /// The value of type `T` this pointer points to.
    @inlinable
    @inline(__always)
    func value<T>(_ type: T.Type) -> T { assumingMemoryBound(to: T.self).pointee }
}

/// A feedback: it watches a loop's states and emits events, usually by running effects.
///
/// A `Feedback` is a description, shared by any number of loops; each loop attaches its own instance, so
/// cancellation is scoped to one loop. Effects run in `Task`s that start immediately: an effect runs on the engine
/// owner's thread until its first suspension, so an event it produces without suspending is queued at once, in the
/// order the effects were started (it must not block). Cancellation is Task cancellation; an effect's error becomes
/// an event through the feedback's `onError` mapping (or is dropped), it never stops the loop.
public struct Feedback<State: Sendable, Event: Sendable>: Sendable {
    @usableFromInline
    let attach: @Sendable () -> Reactor<Event>
    /// What problems and logs call this feedback (``named(_:)``); nil until named.
    public private(set) var name: String?

    @inlinable
    init(attach: @escaping @Sendable () -> Reactor<Event>) {
        self.attach = attach
    }

    /// A synchronous feedback over every (state, event) step (not the initial state): `body` runs on the
    /// engine owner's thread right after the reduce; events it sends through the sink are queued. ``steps(_:)``
    /// also sees the initial state.
    public static func middleware(
        _ body: @escaping @Sendable (_ state: State, _ event: Event, _ sink: EventSink<Event>) -> Void
    ) -> Feedback {
        Feedback {
            { state, event, sink in
                if let event, let sink { body(state.value(State.self), event.value(Event.self), sink) }
            }
        }
    }

    /// A synchronous feedback over every (state, causing event) pair from the initial state on: `(initial, nil)`
    /// first, while the loop starts, then `(state, event)` right after each reduce. `body` runs on the engine
    /// owner's thread; events it sends through the sink are queued (breadth-first, in feedback order).
    public static func steps(
        _ body: @escaping @Sendable (_ state: State, _ event: Event?, _ sink: EventSink<Event>) -> Void
    ) -> Feedback {
        Feedback {
            { state, event, sink in
                if let sink { body(state.value(State.self), event?.value(Event.self), sink) }
            }
        }
    }

    /// A custom feedback over the raw stream of states (the initial one first, then one per reduce, unbounded
    /// buffer): `transform` returns the events to send. Its events are never dropped while the loop runs.
    ///
    /// The stream's task reacts to a state on the engine owner's thread, before the next reduce, whenever it is
    /// waiting for that state and handles it without suspending elsewhere (a `map`, `compactMap` or `flatMap` over
    /// synchronous work): then its events are queued in feedback order like a synchronous feedback's. Once it
    /// suspends on something else, it goes on in the background and the states wait in the buffer.
    public static func custom<Events: AsyncSequence & Sendable>(
        onError: (@Sendable (any Error) -> Event?)? = nil,
        _ transform: @escaping @Sendable (AsyncStream<State>) -> Events
    ) -> Feedback where Events.Element == Event {
        Feedback {
            let runner = StreamRunner<State, Event>()
            return { state, _, sink in
                guard let sink else { return runner.stop() }
                runner.yield(state.value(State.self), sink: sink) { states, emit in
                    for try await event in transform(states) { emit(event) }
                } onError: {
                    onError?($0)
                }
            }
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
            return { _, _, sink in
                guard let sink else { return effect.cancel() }
                guard !effect.started else { return }
                effect.started = true
                effect.launch(sink: sink, onError: onError) { emit in
                    try await emit.forward(source)
                }
            }
        }
    }

    /// This feedback under a name, which problems and logs use (a runaway's report names it).
    public func named(_ name: String) -> Feedback {
        var named = self
        named.name = name
        return named
    }

    /// Lifts this feedback into a parent system: it sees `state(parent)`, the parent events that `event`
    /// extracts (nil for the others), and its events are embedded with `embed`.
    public func pullback<Parent: Sendable, ParentEvent: Sendable>(
        state: @escaping @Sendable (Parent) -> State,
        event: @escaping @Sendable (ParentEvent) -> Event? = { _ in nil },
        embed: @escaping @Sendable (Event) -> ParentEvent
    ) -> Feedback<Parent, ParentEvent> {
        let attachChild = attach
        var lifted = Feedback<Parent, ParentEvent> {
            let child = attachChild()
            let cache = SinkCache<Event, ParentEvent>(embed)
            return { parent, parentEvent, sink in
                let local = state(parent.value(Parent.self))
                let localEvent = parentEvent.flatMap { event($0.value(ParentEvent.self)) }
                let localSink = sink.map { cache.sink(over: $0) }
                withUnsafePointer(to: local) { local in
                    if let localEvent {
                        withUnsafePointer(to: localEvent) {
                            child(UnsafeRawPointer(local), UnsafeRawPointer($0), localSink)
                        }
                    } else {
                        child(UnsafeRawPointer(local), nil, localSink)
                    }
                }
            }
        }
        lifted.name = name
        return lifted
    }
}
