extension Loop {
    /// Calls `body` synchronously, in order, on the engine owner's thread: first with the current step (its
    /// event is nil), then for every reduced event with the new state and revision. `body` may read the loop
    /// and send to it (the events are queued). After a stop the observation ends.
    @discardableResult
    public func observe(_ body: @escaping @Sendable (Step<State, Event>) -> Void) -> Observation {
        observe(body, finish: nil)
    }

    func observe(
        _ body: @escaping @Sendable (Step<State, Event>) -> Void,
        finish: (@Sendable () -> Void)?
    ) -> Observation {
        let observer = StepObserver(body: body, finish: finish)
        if !enqueue(.observe(observer)) {
            body(currentStep)
            finish?()
        }
        return Observation { [weak self] in
            observer.cancel()
            self?.withCore { core, _ in core.observers.removeAll { $0 === observer } }
        }
    }

    /// The states of the loop, the current one first. A slow consumer sees only the latest state: the stream
    /// conflates (it buffers one state), so the loop never buffers without bound. It finishes when the loop
    /// stops.
    public var states: AsyncStream<State> {
        let (stream, continuation) = AsyncStream.makeStream(of: State.self, bufferingPolicy: .bufferingNewest(1))
        let observation = observe({ continuation.yield($0.state) }, finish: { continuation.finish() })
        continuation.onTermination = { _ in observation.cancel() }
        return stream
    }

    /// Every step, with its event and revision; like `states` it conflates to the latest step.
    public var steps: AsyncStream<Step<State, Event>> {
        let (stream, continuation) = AsyncStream.makeStream(
            of: Step<State, Event>.self,
            bufferingPolicy: .bufferingNewest(1)
        )
        let observation = observe({ continuation.yield($0) }, finish: { continuation.finish() })
        continuation.onTermination = { _ in observation.cancel() }
        return stream
    }

    /// A selector: the part of the state that `select` picks, the current value first, then only when it
    /// changes (distinct until changed). Conflating: a slow consumer sees the latest value.
    public func select<Value: Equatable & Sendable>(
        _ select: @escaping @Sendable (State) -> Value
    ) -> AsyncStream<Value> {
        let (stream, continuation) = AsyncStream.makeStream(of: Value.self, bufferingPolicy: .bufferingNewest(1))
        let distinct = DistinctFilter<Value>()
        let observation = observe(
            { step in
                let value = select(step.state)
                if distinct.isNew(value) { continuation.yield(value) }
            },
            finish: { continuation.finish() }
        )
        continuation.onTermination = { _ in observation.cancel() }
        return stream
    }

    /// A logging hook: `log` receives one line per step, `#revision event -> state`.
    @discardableResult
    public func logSteps(_ log: @escaping @Sendable (String) -> Void) -> Observation {
        observe { step in
            let event = step.event.map { String(describing: $0) } ?? "initial"
            log("#\(step.revision) \(event) -> \(step.state)")
        }
    }
}

/// Remembers the last value; used only from observer calls, which the loop serialises.
final class DistinctFilter<Value: Equatable & Sendable>: @unchecked Sendable {
    private var last: Value?

    func isNew(_ value: Value) -> Bool {
        if let last, last == value { return false }
        last = value
        return true
    }
}
