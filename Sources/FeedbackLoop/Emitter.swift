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
@usableFromInline
func launchEffect<Event: Sendable>(
    sink: EventSink<Event>,
    onError: (@Sendable (any Error) -> Event?)?,
    _ body: @escaping @Sendable (Emitter<Event>) async throws -> Void
) -> EffectTicket {
    let ticket = EffectTicket()
    let emitter = Emitter(sink: sink.weakened(), ticket: ticket)
    ticket.attach(
        Task {
            do {
                try await body(emitter)
            } catch is CancellationError {
                // Cancelled effects emit nothing.
            } catch {
                if let event = onError?(error) { emitter(event) }
            }
        }
    )
    return ticket
}
