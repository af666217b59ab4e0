extension Loop {
    /// Queues `events` in order (none can interleave with them) and calls `completion` with the step right
    /// after the last of them was reduced and every feedback and observer saw it; on the calling thread when it
    /// claims the engine, else on the engine owner's thread. With no events it gets the current step; when the loop
    /// stops first it gets nil.
    @inlinable
    public func send<Events: Sequence>(
        contentsOf events: Events,
        completion: @escaping Completion
    ) where Events.Element == Event {
        let batch = Array(events)
        let claimed = withCore { core, flags -> Bool? in
            if core.stopped { return nil }
            guard !batch.isEmpty else { return nil }
            core.append(batch, completion: completion)
            return EngineLock.claim(&flags)
        }
        guard let claimed else {
            completion(batch.isEmpty && !isStopped ? currentStep : nil)
            return
        }
        if claimed { runClaimed() }
    }

    /// Queues `events` and returns the step right after the last of them was reduced (nil when stopped).
    public func send<Events: Sequence>(contentsOf events: Events) async -> Step<State, Event>?
    where Events.Element == Event {
        await withCheckedContinuation { continuation in
            send(contentsOf: events) { continuation.resume(returning: $0) }
        }
    }
}

extension Loop {
    /// Queues `events` only if they will be reduced right after revision `revision`: the loop is at that
    /// revision and no other event waits before them. Then `completion` is called as for
    /// ``send(contentsOf:completion:)`` and this returns true. Otherwise nothing is queued, `completion` is never
    /// called, and this returns false. Compare-and-send in one step under the loop's lock, for `If-Match`.
    ///
    /// A stopped loop counts as queued: `completion` gets nil. An empty `events` gets the current step when the
    /// revision matches.
    @inlinable
    @discardableResult
    public func send<Events: Sequence>(
        contentsOf events: Events,
        ifRevision revision: UInt64,
        completion: @escaping Completion
    ) -> Bool where Events.Element == Event {
        let batch = Array(events)
        let outcome = withCore { core, flags -> ConditionalOutcome in
            if core.stopped { return .stopped }
            // A closure, not `\.isEvent`: a key path literal in generic code is instantiated (allocated) per call.
            guard core.revision == revision, !core.reducing, !core.queue.contains(where: { $0.isEvent }) else {
                return .stale
            }
            guard !batch.isEmpty else { return .current(core.step) }
            core.append(batch, completion: completion)
            return .queued(claimed: EngineLock.claim(&flags))
        }
        return conclude(outcome, completion)
    }

    /// What a conditional send does after its critical section: false when stale, else the completion of a stopped
    /// loop or an empty batch, or the run of a queue just claimed; true.
    @inlinable
    func conclude(_ outcome: ConditionalOutcome, _ completion: Completion) -> Bool {
        switch outcome {
        case .stale: return false
        case .stopped: completion(nil)
        case .current(let step): completion(step)
        case .queued(let claimed): if claimed { runClaimed() }
        }
        return true
    }
}

extension Loop {
    /// ``send(contentsOf:ifRevision:completion:)`` when `revision` is given, else ``send(contentsOf:completion:)``
    /// (which always queues, and returns true). One entry for a caller that holds it as a closure made where `State`
    /// and `Event` are concrete, so that the loop's queue runs specialised for them.
    @inlinable
    @discardableResult
    public func send(_ events: [Event], ifRevision revision: UInt64?, completion: @escaping Completion) -> Bool {
        guard let revision else {
            send(contentsOf: events, completion: completion)
            return true
        }
        return send(contentsOf: events, ifRevision: revision, completion: completion)
    }
}

extension Loop {
    /// Queues `events` together with the states `states` they make, one per event, reduced by the caller on a copy of
    /// the state at `revision`: only if they will be applied right after revision `revision` (as for
    /// ``send(contentsOf:ifRevision:completion:)``). Then the loop installs each state instead of reducing its event
    /// again (the reducer is pure, so the steps are the same: feedbacks, observers and `completion` see them as
    /// usual), `accepted` is called under the loop's lock before any of them runs, and this returns true. Otherwise
    /// nothing is queued, neither closure is called, and this returns false. For a sender that had to reduce the
    /// events anyway (to check what they make of the state): one reduce per event instead of two.
    /// Any random-access collections: a sender whose batch is one event passes it and its state without an array.
    @inlinable
    @discardableResult
    public func send<Events: RandomAccessCollection, States: RandomAccessCollection>(
        _ events: Events,
        applying states: States,
        ifRevision revision: UInt64,
        accepted: () -> Void = {},
        completion: @escaping Completion
    ) -> Bool where Events.Element == Event, States.Element == State {
        precondition(events.count == states.count, "one state per event")
        let outcome = withCore { core, flags -> ConditionalOutcome in
            if core.stopped { return .stopped }
            guard core.revision == revision, !core.reducing, !core.queue.contains(where: { $0.isEvent }) else {
                return .stale
            }
            guard !events.isEmpty else { return .current(core.step) }
            var event = events.startIndex
            var state = states.startIndex
            for _ in 1..<events.count {
                core.appliedStates.append(states[state])
                core.queue.append(.applied(events[event], nil))
                events.formIndex(after: &event)
                states.formIndex(after: &state)
            }
            core.appliedStates.append(states[state])
            core.queue.append(.applied(events[event], completion))
            accepted()
            return .queued(claimed: EngineLock.claim(&flags))
        }
        return conclude(outcome, completion)
    }
}

extension Loop {
    @usableFromInline
    enum ConditionalOutcome {
        case stale, stopped
        case current(Step<State, Event>)
        case queued(claimed: Bool)
    }
}

extension Loop.Core {
    /// Queues a non-empty batch in order, the completion riding on its last event.
    @inlinable
    mutating func append(_ batch: [Event], completion: @escaping Loop.Completion) {
        // Indexes, not `dropLast()`: in this generic code a slice costs a metadata lookup per call.
        for index in 0..<(batch.count - 1) { queue.append(.event(batch[index], nil, nil)) }
        queue.append(.event(batch[batch.count - 1], nil, completion))
    }
}

extension Loop.Entry {
    @usableFromInline
    var isEvent: Bool {
        switch self {
        case .event, .feedback, .applied: return true
        case .observe, .resume: return false
        }
    }

    @usableFromInline
    var isFeedback: Bool {
        if case .feedback = self { return true }
        return false
    }
}
