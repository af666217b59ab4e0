/// One loop's instance of `react(requests:)` over a `Set`: one effect per element, started when the element
/// appears and cancelled when it disappears. Touched only by the loop's engine owner.
final class SetReactor<State: Sendable, Event: Sendable, Request: Hashable & Sendable>: @unchecked Sendable {
    private let requests: @Sendable (State) -> Set<Request>
    private let run: @Sendable (Request, Emitter<Event>) async throws -> Void
    private let onError: (@Sendable (any Error) -> Event?)?
    private var running: [Request: EffectTicket] = [:]

    init(
        requests: @escaping @Sendable (State) -> Set<Request>,
        run: @escaping @Sendable (Request, Emitter<Event>) async throws -> Void,
        onError: (@Sendable (any Error) -> Event?)?
    ) {
        self.requests = requests
        self.run = run
        self.onError = onError
    }

    func react(_ state: State, sink: EventSink<Event>) {
        let wanted = requests(state)
        if running.keys.contains(where: { !wanted.contains($0) }) {
            let gone = running.keys.filter { !wanted.contains($0) }
            for request in gone { running.removeValue(forKey: request)?.cancel() }
        }
        for request in wanted where running[request] == nil {
            let run = self.run
            running[request] = launchEffect(sink: sink, onError: onError) { emit in try await run(request, emit) }
        }
    }

    func stop() {
        for ticket in running.values { ticket.cancel() }
        running = [:]
    }
}
