/// One loop's instance of the keyed `react(requests:)`: one effect per ID.
///
/// An ID's effect starts once; a new value for a running ID is pushed into its update stream (conflating:
/// the effect sees the latest value); an ID that disappears cancels its effect, drops its queued events and
/// finishes its update stream. Touched only by the loop's engine owner. With an effect tracker, an effect waiting
/// for its next update counts as idle (``LoopFeed``).
final class KeyedReactor<
    State: Sendable,
    Event: Sendable,
    ID: Hashable & Sendable,
    Request: Equatable & Sendable
>: @unchecked Sendable {
    struct Running {
        var request: Request
        let ticket: EffectTicket
        let updates: LoopFeed<Request>
    }

    private let requests: @Sendable (State) -> [ID: Request]
    private let run: @Sendable (Request, AsyncStream<Request>, Emitter<Event>) async throws -> Void
    private let onError: (@Sendable (any Error) -> Event?)?
    private var running: [ID: Running] = [:]

    init(
        requests: @escaping @Sendable (State) -> [ID: Request],
        run: @escaping @Sendable (Request, AsyncStream<Request>, Emitter<Event>) async throws -> Void,
        onError: (@Sendable (any Error) -> Event?)?
    ) {
        self.requests = requests
        self.run = run
        self.onError = onError
    }

    func react(_ state: State, sink: EventSink<Event>) {
        let wanted = requests(state)
        if running.keys.contains(where: { wanted[$0] == nil }) {
            let gone = running.keys.filter { wanted[$0] == nil }
            for id in gone {
                if let entry = running.removeValue(forKey: id) {
                    entry.ticket.cancel()
                    entry.updates.finish()
                }
            }
        }
        for (id, request) in wanted {
            if var entry = running[id] {
                guard entry.request != request else { continue }
                entry.request = request
                entry.updates.yield(request)
                running[id] = entry
            } else {
                let feed = LoopFeed<Request>(tracker: sink.effectTracker, bufferingPolicy: .bufferingNewest(1))
                let updates = feed.makeStream()
                let run = self.run
                let ticket = launchEffect(sink: sink, onError: onError) { emit in
                    try await run(request, updates, emit)
                }
                running[id] = Running(request: request, ticket: ticket, updates: feed)
            }
        }
    }

    func stop() {
        for entry in running.values {
            entry.ticket.cancel()
            entry.updates.finish()
        }
        running = [:]
    }
}
