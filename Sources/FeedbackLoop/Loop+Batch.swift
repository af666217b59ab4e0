extension Loop {
    /// Queues `events` in order (none can interleave with them) and calls `completion` with the step right
    /// after the last of them was reduced and every feedback and observer saw it; on the calling thread when it
    /// becomes the drainer, else on the draining thread. With no events it gets the current step; when the loop
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
            for event in batch.dropLast() { core.queue.append(.event(event, nil, nil)) }
            core.queue.append(.event(batch[batch.count - 1], nil, completion))
            if flags & EngineLock.draining != 0 {
                flags |= EngineLock.pending
                return false
            }
            flags = EngineLock.draining
            return true
        }
        guard let claimed else {
            completion(batch.isEmpty && !isStopped ? currentStep : nil)
            return
        }
        if claimed { drain() }
    }

    /// Queues `events` and returns the step right after the last of them was reduced (nil when stopped).
    public func send<Events: Sequence>(contentsOf events: Events) async -> Step<State, Event>?
    where Events.Element == Event {
        await withCheckedContinuation { continuation in
            send(contentsOf: events) { continuation.resume(returning: $0) }
        }
    }
}
