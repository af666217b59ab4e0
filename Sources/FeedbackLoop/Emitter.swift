/// Sends the events of one running effect; they count only while the effect's ticket is live.
public struct Emitter<Event: Sendable>: Sendable {
    @usableFromInline
    let sink: EventSink<Event>
    @usableFromInline
    let ticket: EffectTicket

    @usableFromInline
    init(sink: EventSink<Event>, ticket: EffectTicket) {
        self.sink = sink
        self.ticket = ticket
    }

    /// Sends `event` to the loop (queued; dropped once the effect's request changed or the loop stopped).
    public func callAsFunction(_ event: Event) {
        sink.deliver(event, ticket: ticket)
    }
}

/// Starts an effect in a `Task` with a fresh ticket, over a weak sink so the effect never keeps its loop alive.
///
/// The task starts immediately (`Task.immediate`, SE-0472): its body runs on the calling thread, the engine owner's,
/// until its first suspension. So an effect that produces its event without suspending has queued it when this
/// returns, and effects started one after the other queue such events in the order they were started. The body
/// must not block: until it suspends it holds up the loop. The task prefers `executor` (a `custom` feedback's
/// ``ReactionExecutor``), else the sink's effect executor (a host's, that marks whose code runs), else none. The
/// sink's effect tracker, if any, is told when the effect starts and ends.
@usableFromInline
func launchEffect<Event: Sendable>(
    sink: EventSink<Event>,
    executor: (any TaskExecutor)? = nil,
    onError: (@Sendable (any Error) -> Event?)?,
    _ body: @escaping @Sendable (Emitter<Event>) async throws -> Void
) -> EffectTicket {
    let ticket = EffectTicket()
    let emitter = Emitter(sink: sink.weakened(), ticket: ticket)
    let tracker = sink.effectTracker
    let executor = executor ?? sink.effectExecutor
    tracker?.effectStarted()
    let operation: @Sendable () async -> Void = {
        defer { tracker?.effectEnded() }
        do {
            try await body(emitter)
        } catch is CancellationError {
            // Cancelled effects emit nothing.
        } catch {
            if let event = onError?(error) { emitter(event) }
        }
    }
    if #available(macOS 26.0, iOS 26.0, watchOS 26.0, tvOS 26.0, visionOS 26.0, *) {
        ticket.attach(Task.immediate(executorPreference: executor, operation: operation))
    } else {
        ticket.attach(Task(executorPreference: executor, operation: operation))
    }
    return ticket
}

extension Emitter {
    /// Emits every element of `events`, in order. After every 64 it stops if the effect was cancelled and yields
    /// once: a sequence that always has an element ready (a flood) would otherwise never suspend, holding for good the
    /// thread the effect started on (the engine owner's: a server thread) and running on after its cancellation.
    @inlinable
    func forward<Events: AsyncSequence>(_ events: Events) async throws where Events.Element == Event {
        var sent = 0
        for try await event in events {
            self(event)
            sent &+= 1
            if sent & 63 == 0 {
                try Task.checkCancellation()
                await Task.yield()
            }
        }
    }
}
