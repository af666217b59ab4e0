import CoreMetrics
import Dispatch
import FeedbackJSON
import FeedbackLoop
import HTTPServer
import SessionRuntime
import Synchronization

/// The open streams of one session: it takes each new state from the session's loop, frames every event once per
/// view (the whole state, or one selection) and writes the shared bytes to each subscriber that keeps up.
///
/// The hub follows the session's loop only while it has subscribers, and for `linger` after the last one left (a
/// client that reconnects within it resumes with a patch); then it leaves the registry, so a session nobody watches
/// pays nothing for streams, neither time nor memory. The session's next stream makes a new hub, which starts from
/// the current state.
///
/// Concurrency: everything but two fields is owned by `queue`, the hub's own serial queue. The loop's observer
/// only appends the encoded state to `incoming` (a `Mutex`) and schedules one drain on the queue, so a poster
/// never waits for the fan-out; `ResponseStream` callbacks (on shard queues) hop onto the queue. `admitted`
/// (streams counted against the session's limit) is atomic, so the handler admits on the shard queue.
package final class StreamHub: @unchecked Sendable {
    struct Incoming {
        var states: [(rev: UInt64, json: [UInt8], clients: [UInt8]?)] = []
        var scheduled = false
    }

    /// States waiting beyond this are dropped, oldest first: subscribers then get the latest (a conflation).
    static let incomingLimit = 256

    let id: SessionID
    let epoch: UInt64
    let registry: StreamRegistry
    /// The session whose states the hub streams; weak, so a hub never keeps an ended session alive.
    private(set) weak var session: (any HostedSession)?
    let queue: DispatchQueue
    private let incoming = Mutex(Incoming())
    private let admitted = Atomic<Int>(0)

    // Owned by `queue`. The fields a fan-out's pass changes (`behindCount` for a subscriber, `writesInFlight` for a
    // part) are `@exclusivity(unchecked)`: no run-time check for each.
    var subscribers: [StreamSubscriber] = []
    let whole: StreamView
    var selections: [String: StreamView] = [:]
    /// Idle, following, lingering, retired, ended or draining: what a subscriber, a linger or an end does.
    var lifecycle = HubLifecycle()
    /// The loop observation that feeds `publish`, while the hub follows the session.
    var observation: Observation?
    var timer: (any DispatchSourceTimer)?
    var recheckScheduled = false
    /// Subscribers held back, so that a catch-up with none skips the scan.
    @exclusivity(unchecked)
    var behindCount = 0
    /// Fan-out writes handed to the shards whose completion has not come back. While any is out, a new state holds
    /// every subscriber back, and the last completion brings them all to the latest in one pass: one pass at a
    /// time, each with the newest state, so the first streams of a fan-out are not served again before the last.
    @exclusivity(unchecked)
    var writesInFlight = 0

    init(session: any HostedSession, epoch: UInt64, registry: StreamRegistry) {
        id = session.id
        self.session = session
        self.epoch = epoch
        self.registry = registry
        queue = DispatchQueue(label: "feedbackhost.stream-hub", qos: .userInitiated)
        whole = StreamView(epoch: epoch, select: [], schema: session.schemaHash)
    }

    // MARK: - New states (any thread)

    /// Takes a new state of the session, in revision order, from the session's observation: with a journal once the
    /// state is journaled (usually on the journal's writer queue), without one on the thread that reduced it.
    func publish(rev: UInt64, json: [UInt8], clients: [UInt8]? = nil) {
        let schedule = incoming.withLock { incoming -> Bool in
            if incoming.states.count >= Self.incomingLimit { incoming.states.removeFirst() }
            incoming.states.append((rev, json, clients))
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
        for state in states { apply(rev: state.rev, json: state.json, clients: state.clients) }
    }

    /// Starts following the session (on the queue): observes its loop, then takes its current state at once, so
    /// the views hold the latest value before a subscriber is served and no later state falls between (states
    /// the observation delivers that are not newer are ignored). With a journal the current state is taken only
    /// once the journal holds it (`journaledSnapshot`); until then the observation brings it when it is, and
    /// never when the journal refuses it (another replica took the session over meanwhile).
    func follow() {
        dispatchPrecondition(condition: .onQueue(queue))
        guard observation == nil, !lifecycle.isEnded, let session else { return }
        observation = session.observeSnapshots { [weak self] snapshot in
            self?.publish(rev: snapshot.rev, json: snapshot.state, clients: snapshot.clients)
        }
        registry.metrics.following.increment()
        if let current = session.journaledSnapshot() {
            apply(rev: current.rev, json: current.state, clients: current.clients)
        }
        startHeartbeats()
    }

    /// Stops following the session: no more states come in, no timer runs.
    func unfollow() {
        dispatchPrecondition(condition: .onQueue(queue))
        guard let observation else { return }
        observation.cancel()
        self.observation = nil
        registry.metrics.following.decrement()
        timer?.cancel()
        timer = nil
    }

    /// When the last subscriber left `linger` ago and none came since: stops following the session and leaves the
    /// registry, which makes a new hub for the session's next stream. A stream already on its way here is handed
    /// to that hub (`subscribe`).
    func retireLater() {
        dispatchPrecondition(condition: .onQueue(queue))
        guard let number = lifecycle.lastSubscriberLeft() else { return }
        let linger = registry.configuration.linger.wholeNanoseconds
        queue.asyncAfter(deadline: .now() + .nanoseconds(linger)) { [weak self] in
            guard let self, lifecycle.lingerEnded(number) else { return }
            unfollow()
            registry.remove(self)
            // The session's idle time starts now, not at its last request: it was watched until now.
            session?.touch()
        }
    }

    private func apply(rev: UInt64, json: [UInt8], clients: [UInt8]?) {
        guard !lifecycle.isEnded, whole.latestRev.map({ rev > $0 }) ?? true else { return }
        var parsed: JSONValue?
        let value = { () -> JSONValue in
            if let parsed { return parsed }
            let value = (try? JSONValue(parsing: json)) ?? .null
            parsed = value
            return value
        }
        var changed = whole.offer(rev: rev, state: json, clients: clients, value: value)
        for view in selections.values where view.offer(rev: rev, state: json, clients: clients, value: value) {
            changed = true
        }
        // Subscribers of a view that did not change already have its latest value: their state machines say so.
        guard changed, !subscribers.isEmpty else { return }
        bringUpToDate(subscribers)
    }

    /// Brings subscribers to their views' latest values, as each one's `SubscriberState` decides. A subscriber
    /// whose stream is not idle (its previous frame still waits for the shard, or its client lags past the
    /// high-water mark) is held back (a conflation); the others get a patch or a snapshot. Subscribers that get the
    /// same frame (the same view, from the same base) share its bytes and are written with one hop per shard; once
    /// a write is out, the ones held back get the latest, so under load each stream carries at most one frame the
    /// server has not sent and the latency stays that of one fan-out, not of a queue. `waitForIdle: false` writes regardless (a new
    /// subscriber's first frame, queued right behind its prelude).
    func bringUpToDate(_ candidates: some Sequence<StreamSubscriber>, waitForIdle: Bool = true) {
        dispatchPrecondition(condition: .onQueue(queue))
        var pass = Pass(
            now: DispatchTime.now().uptimeNanoseconds,
            passInFlight: waitForIdle && writesInFlight > 0,
            waitForIdle: waitForIdle,
            // A part's streams, as far as the candidates' count is known (a catch-up's filter does not know it).
            part: min(registry.configuration.writePart, candidates.underestimatedCount)
        )
        // A large fan-out meets every subscriber cold (`Prefetch`): the subscriber four ahead and the stream two ahead
        // (whose subscriber, asked for two steps earlier, says which it is) are fetched while this one is decided on
        // (a step here is short: no system call hides a miss).
        let walked: Void? = candidates.withContiguousStorageIfAvailable { all in
            for index in all.indices {
                Prefetch.object(at: index &+ 4, in: all)
                if index &+ 2 < all.count { all[index &+ 2].stream.prefetch() }
                pass.consider(all[index], in: self)
            }
        }
        if walked == nil {
            for subscriber in candidates { pass.consider(subscriber, in: self) }
        }
        for index in pass.batches.indices where pass.batches[index].added > 0 { send(&pass.batches[index]) }
        registry.metrics.sent(events: pass.events, bytes: pass.bytes)
        if pass.conflated > 0 {
            registry.metrics.conflations.increment(by: pass.conflated)
            scheduleRecheck()
        }
    }

    /// One `bringUpToDate` pass: the frames it writes, each with the streams that get it, and its counts. A value the
    /// pass changes in place: variables of the function that a nested function changed, used from a closure, were
    /// checked for exclusive access at run time, once for every subscriber of a fan-out.
    private struct Pass {
        let now: UInt64
        let passInFlight: Bool
        let waitForIdle: Bool
        /// The room a frame's list of streams for one shard is made with.
        let part: Int
        /// The frames of this pass, in the order of their keys in `keys`; nearly every subscriber gets the same one
        /// as the subscriber before it (`last`), which is found without a look in `keys`.
        var batches: [ResponseStream.FanOut] = []
        var keys = FrameIndex<FrameKey>()
        var last: (key: FrameKey, index: Int)?
        var events = 0
        var bytes = 0
        var conflated = 0

        /// Decides what `subscriber` gets (`SubscriberState.next`) and files its stream under that frame's batch.
        mutating func consider(_ subscriber: StreamSubscriber, in hub: StreamHub) {
            let view = subscriber.view
            let wasBehind = subscriber.behind
            // Copied out: the closure below cannot capture the pass (`self`, changed in place).
            let passInFlight = passInFlight
            let waitForIdle = waitForIdle
            let (action, resumed) = subscriber.state.next(
                latest: view.latestRev,
                epoch: hub.epoch,
                ready: { !passInFlight && (!waitForIdle || subscriber.stream.isIdle) },
                canPatch: view.canPatch(from:)
            )
            if let resumed { hub.registry.metrics.resumed(resumed) }
            if subscriber.behind != wasBehind { hub.behindCount += subscriber.behind ? 1 : -1 }
            let key: FrameKey
            switch action {
            case .nothing:
                return
            case .holdBack(let newValue):
                if newValue { conflated += 1 }
                return
            case .patch(let base):
                key = FrameKey(view: ObjectIdentifier(view), base: base)
            case .snapshot:
                key = FrameKey(view: ObjectIdentifier(view), base: nil)
            }
            let index: Int
            if let last, last.key == key {
                index = last.index
            } else if let known = keys.position(of: key) {
                index = known
            } else {
                let frame = key.base.flatMap(view.patch(from:)) ?? view.snapshot()
                batches.append(ResponseStream.FanOut(frame, capacity: part))
                index = keys.add(key)
            }
            last = (key, index)
            subscriber.lastWrite = now
            batches[index].add(subscriber.stream)
            events += 1
            bytes += batches[index].bytes.count
            // A large fan-out goes out a part at a time: the shards send the first part while this pass goes on.
            if batches[index].added >= hub.registry.configuration.writePart { hub.send(&batches[index]) }
        }
    }

    /// Hands a part of a fan-out to the shards; its completion counts it back in.
    private func send(_ part: inout ResponseStream.FanOut) {
        writesInFlight += 1
        part.send { [weak self] in self?.writeCompleted() }
    }

    /// Which frame a subscriber gets: frames with equal keys are equal.
    struct FrameKey: Hashable {
        let view: ObjectIdentifier
        /// The patch's base; nil for a snapshot.
        let base: UInt64?
    }

    // MARK: - Slow subscribers

    /// Gives a subscriber that was held back the latest value once it can take it.
    func catchUp(_ subscriber: StreamSubscriber) {
        dispatchPrecondition(condition: .onQueue(queue))
        guard subscriber.behind else { return }
        bringUpToDate(CollectionOfOne(subscriber))
    }

    /// Gives every subscriber that was held back and can take it now the latest value, in one batch.
    func catchUpBehind() {
        dispatchPrecondition(condition: .onQueue(queue))
        guard behindCount > 0 else { return }
        bringUpToDate(subscribers.lazy.filter(\.behind))
    }

    /// A fan-out write is out (any thread): when it was the last one, the subscribers held back meanwhile get the
    /// latest value, in the next pass.
    private func writeCompleted() {
        queue.async { [self] in
            writesInFlight -= 1
            if writesInFlight == 0 { catchUpBehind() }
        }
    }

    /// `onWritable` fires only after the pending bytes crossed the high-water mark in the connection; bytes still
    /// queued towards it can hold a subscriber back without that. One look a little later covers that case.
    private func scheduleRecheck() {
        guard !recheckScheduled else { return }
        recheckScheduled = true
        queue.asyncAfter(deadline: .now() + .milliseconds(50)) { [self] in
            recheckScheduled = false
            catchUpBehind()
        }
    }

    // MARK: - Admission (any thread)

    /// Admits one more stream of this session: counts it against the server's total (the registry) and the
    /// session's limit, or counts nothing and says which limit refused it. The one admission path of streams.
    package func admit() -> StreamMetrics.CloseReason? {
        guard registry.admit() else { return .totalLimit }
        guard admitted.increment(below: registry.configuration.maxPerSession) else {
            registry.release()
            return .sessionLimit
        }
        return nil
    }

    /// Counts a stream that another hub of the session admitted and handed over (no limit: it was admitted).
    func adopt() {
        admitted.add(1, ordering: .relaxed)
    }

    /// Uncounts a stream handed to another hub; the registry's count stays.
    func handedOver() {
        admitted.subtract(1, ordering: .relaxed)
    }

    /// Uncounts a stream, here and in the registry.
    func release() {
        admitted.subtract(1, ordering: .relaxed)
        registry.release()
    }
}
