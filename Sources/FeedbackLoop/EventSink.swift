/// Where feedbacks and effects deliver events to a loop.
///
/// A `Loop` is its own sink; a pulled-back feedback sees a sink that maps its events into the parent's.
/// Concurrency: `send(_:)` may be called from any thread; it only enqueues (or, when no other thread owns the loop's
/// engine, claims it and runs the queue on the calling thread, see ``Loop``).
public class EventSink<Event: Sendable>: @unchecked Sendable {
    @usableFromInline
    init() {}

    /// Sends an external event: it is never dropped while the loop runs.
    public func send(_ event: Event) {
        deliver(event, ticket: nil)
    }

    /// Delivers an event; when `ticket` is not nil the event is dropped unless the ticket is still live when
    /// the event is dequeued.
    @usableFromInline
    func deliver(_ event: Event, ticket: EffectTicket?) {
        fatalError("EventSink.deliver must be overridden")
    }

    /// A sink that an effect can keep after the loop is gone: it refers to the loop weakly.
    @usableFromInline
    func weakened() -> EventSink<Event> {
        fatalError("EventSink.weakened must be overridden")
    }

    /// Who is told when the effects launched through this sink start and end; nil for nobody.
    @usableFromInline
    var effectTracker: (any EffectTracking)? { nil }

    /// Where the effects launched through this sink run after their first suspension; nil for the global
    /// concurrent executor.
    @usableFromInline
    var effectExecutor: (any TaskExecutor)? { nil }
}

/// Refers to its target weakly, so that running effects do not keep a loop alive.
@usableFromInline
final class WeakEventSink<Event: Sendable>: EventSink<Event>, @unchecked Sendable {
    // Written once in init; a weak reference is itself thread-safe to load.
    @usableFromInline
    weak var target: EventSink<Event>?

    @usableFromInline
    init(_ target: EventSink<Event>) {
        self.target = target
    }

    @usableFromInline
    override func deliver(_ event: Event, ticket: EffectTicket?) {
        target?.deliver(event, ticket: ticket)
    }

    @usableFromInline
    override func weakened() -> EventSink<Event> { self }

    @usableFromInline
    override var effectTracker: (any EffectTracking)? { target?.effectTracker }

    @usableFromInline
    override var effectExecutor: (any TaskExecutor)? { target?.effectExecutor }
}

/// Maps a child's events into a parent sink (pulled-back feedbacks).
///
/// The unretained form is cached by a pulled-back feedback that the loop owns, so it never outlives the loop;
/// `weakened()` gives a retaining form over a weak parent for effects.
@usableFromInline
final class MappedEventSink<Child: Sendable, Parent: Sendable>: EventSink<Child>, @unchecked Sendable {
    @usableFromInline
    unowned(unsafe) let parent: EventSink<Parent>
    @usableFromInline
    let retainedParent: EventSink<Parent>?
    @usableFromInline
    let transform: @Sendable (Child) -> Parent

    @usableFromInline
    init(unretained parent: EventSink<Parent>, transform: @escaping @Sendable (Child) -> Parent) {
        self.parent = parent
        self.retainedParent = nil
        self.transform = transform
    }

    @usableFromInline
    init(retaining parent: EventSink<Parent>, transform: @escaping @Sendable (Child) -> Parent) {
        self.parent = parent
        self.retainedParent = parent
        self.transform = transform
    }

    @usableFromInline
    override func deliver(_ event: Child, ticket: EffectTicket?) {
        parent.deliver(transform(event), ticket: ticket)
    }

    @usableFromInline
    override func weakened() -> EventSink<Child> {
        MappedEventSink(retaining: parent.weakened(), transform: transform)
    }

    @usableFromInline
    override var effectTracker: (any EffectTracking)? { parent.effectTracker }

    @usableFromInline
    override var effectExecutor: (any TaskExecutor)? { parent.effectExecutor }
}
