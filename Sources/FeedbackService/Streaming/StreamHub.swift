import Dispatch
import FeedbackLoop
import HTTPServer
import Synchronization

/// The open streams of one session: it takes each new state from the session's loop, frames every event once per
/// view (the whole state, or one selection) and writes the shared bytes to each subscriber that keeps up.
///
/// Concurrency: everything but two fields is owned by `queue`, the hub's own serial queue. The loop's observer
/// only appends the encoded state to `incoming` (a `Mutex`) and schedules one drain on the queue, so a poster
/// never waits for the fan-out; `ResponseStream` callbacks (on shard queues) hop onto the queue. `admitted`
/// (streams counted against the session's limit) is atomic, so the handler admits on the shard queue.
final class StreamHub: @unchecked Sendable {
    struct Incoming {
        var states: [(rev: UInt64, json: [UInt8])] = []
        var scheduled = false
    }

    /// States waiting beyond this are dropped, oldest first: subscribers then get the latest (a conflation).
    static let incomingLimit = 256

    let id: SessionID
    let epoch: UInt64
    let registry: StreamRegistry
    let queue: DispatchQueue
    private let incoming = Mutex(Incoming())
    private let admitted = Atomic<Int>(0)

    // Owned by `queue`.
    var subscribers: [StreamSubscriber] = []
    let whole: StreamView
    var selections: [String: StreamView] = [:]
    var ended: StreamFrame.EndReason?
    /// Ended (with or without a reason): no state is sent any more.
    var finished = false
    var drained = false
    var observation: Observation?
    var timer: (any DispatchSourceTimer)?
    var recheckScheduled = false

    init(id: SessionID, epoch: UInt64, registry: StreamRegistry) {
        self.id = id
        self.epoch = epoch
        self.registry = registry
        queue = DispatchQueue(label: "feedbackhost.stream-hub", qos: .userInitiated)
        whole = StreamView(epoch: epoch, select: [])
    }

    // MARK: - New states (any thread)

    /// Takes a new state of the session; called by the loop's observer, in revision order.
    func publish(rev: UInt64, json: [UInt8]) {
        let schedule = incoming.withLock { incoming -> Bool in
            if incoming.states.count >= Self.incomingLimit { incoming.states.removeFirst() }
            incoming.states.append((rev, json))
            if incoming.scheduled { return false }
            incoming.scheduled = true
            return true
        }
        if schedule { queue.async { self.applyIncoming() } }
    }

    private func applyIncoming() {
        dispatchPrecondition(condition: .onQueue(queue))
        let states = incoming.withLock { incoming in
            defer {
                incoming.states.removeAll(keepingCapacity: true)
                incoming.scheduled = false
            }
            return incoming.states
        }
        for state in states { apply(rev: state.rev, json: state.json) }
    }

    private func apply(rev: UInt64, json: [UInt8]) {
        guard !finished, whole.latestRev.map({ rev > $0 }) ?? true else { return }
        var parsed: JSONValue?
        let value = { () -> JSONValue in
            if let parsed { return parsed }
            let value = (try? JSONValue(parsing: json)) ?? .null
            parsed = value
            return value
        }
        var changed: Set<ObjectIdentifier> = []
        if whole.offer(rev: rev, state: json, value: value) { changed.insert(ObjectIdentifier(whole)) }
        for view in selections.values where view.offer(rev: rev, state: json, value: value) {
            changed.insert(ObjectIdentifier(view))
        }
        guard !changed.isEmpty, !subscribers.isEmpty else { return }
        fanOut(changed)
    }

    /// Writes the latest value of each changed view to its subscribers that keep up; marks the others dirty.
    /// Subscribers that get the same frame (the same view, from the same base) share its bytes and are written
    /// with one hop per shard.
    private func fanOut(_ changed: Set<ObjectIdentifier>) {
        let now = DispatchTime.now().uptimeNanoseconds
        var batches: [FrameKey: (frame: [UInt8], streams: [ResponseStream])] = [:]
        var events = 0
        var bytes = 0
        var conflated = 0
        for subscriber in subscribers where changed.contains(ObjectIdentifier(subscriber.view)) {
            if subscriber.dirty {
                conflated += 1
            } else if !subscriber.stream.isWritable {
                subscriber.dirty = true
                conflated += 1
            } else if let (key, frame) = nextFrame(for: subscriber, now: now) {
                if batches[key] == nil { batches[key] = (frame, []) }
                batches[key]!.streams.append(subscriber.stream)
                events += 1
                bytes += frame.count
            }
        }
        for batch in batches.values { ResponseStream.write(batch.frame, to: batch.streams) }
        registry.metrics.sent(events: events, bytes: bytes)
        if conflated > 0 {
            registry.metrics.conflations.increment(by: conflated)
            scheduleRecheck()
        }
    }

    /// Which frame a subscriber gets: frames with equal keys are equal.
    struct FrameKey: Hashable {
        let view: ObjectIdentifier
        /// The patch's base; nil for a snapshot.
        let base: UInt64?
    }

    /// Brings one subscriber to its view's latest value: nothing, one patch or one snapshot. Returns the bytes
    /// written.
    @discardableResult
    func deliver(_ subscriber: StreamSubscriber, now: UInt64) -> Int {
        guard let (_, frame) = nextFrame(for: subscriber, now: now) else { return 0 }
        subscriber.stream.write(frame)
        return frame.count
    }

    /// The frame that brings a subscriber to its view's latest value, nil when it has it; the subscriber is then
    /// counted as having it (the caller writes the frame).
    private func nextFrame(for subscriber: StreamSubscriber, now: UInt64) -> (FrameKey, [UInt8])? {
        let view = subscriber.view
        guard !subscriber.closed, let latest = view.latestRev else { return nil }
        if let cursor = subscriber.resumeFrom {
            subscriber.resumeFrom = nil
            let decision = ResumeOutcome.decide(
                lastEventID: cursor,
                epoch: epoch,
                latest: latest,
                mode: subscriber.mode,
                canPatch: view.canPatch(from:)
            )
            registry.metrics.resumed(decision.outcome)
            subscriber.sentRev = decision.base
        }
        guard subscriber.sentRev != latest else { return nil }
        let result: (FrameKey, [UInt8])
        if subscriber.mode == .patch, let base = subscriber.sentRev, let patch = view.patch(from: base) {
            result = (FrameKey(view: ObjectIdentifier(view), base: base), patch)
        } else {
            result = (FrameKey(view: ObjectIdentifier(view), base: nil), view.snapshot())
        }
        subscriber.sentRev = latest
        subscriber.lastWrite = now
        return result
    }

    // MARK: - Slow subscribers

    /// Gives a dirty subscriber the latest value once it can take it.
    func catchUp(_ subscriber: StreamSubscriber) {
        dispatchPrecondition(condition: .onQueue(queue))
        guard subscriber.dirty, !subscriber.closed, subscriber.stream.isWritable else { return }
        subscriber.dirty = false
        let written = deliver(subscriber, now: DispatchTime.now().uptimeNanoseconds)
        registry.metrics.sent(events: written > 0 ? 1 : 0, bytes: written)
    }

    /// `onWritable` fires only after the pending bytes crossed the high-water mark in the connection; bytes still
    /// queued towards it can hold a subscriber back without that. One look a little later covers that case.
    private func scheduleRecheck() {
        guard !recheckScheduled else { return }
        recheckScheduled = true
        queue.asyncAfter(deadline: .now() + .milliseconds(50)) { [self] in
            recheckScheduled = false
            for subscriber in subscribers where subscriber.dirty { catchUp(subscriber) }
        }
    }

    // MARK: - Admission (any thread)

    /// Counts one more stream of this session unless its limit is reached.
    func admit() -> Bool {
        let limit = registry.configuration.maxPerSession
        while true {
            let current = admitted.load(ordering: .relaxed)
            guard current < limit else { return false }
            if admitted.compareExchange(expected: current, desired: current + 1, ordering: .relaxed).exchanged {
                return true
            }
        }
    }

    /// Uncounts a stream, here and in the registry.
    func release() {
        admitted.subtract(1, ordering: .relaxed)
        registry.release()
    }
}
