import CoreMetrics
import Dispatch
import FeedbackJSON
import FeedbackLoop
package import HTTPServer
import SessionRuntime

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension StreamHub {
    /// Starts the heartbeat timer unless it runs.
    func startHeartbeats() {
        dispatchPrecondition(condition: .onQueue(queue))
        guard timer == nil else { return }
        let tick = max(registry.configuration.heartbeat / 4, .milliseconds(5))
        let interval = DispatchTimeInterval.nanoseconds(tick.wholeNanoseconds)
        let timer = DispatchSource.makeTimerSource(queue: queue)
        timer.schedule(deadline: .now() + interval, repeating: interval, leeway: .milliseconds(5))
        timer.setEventHandler { [weak self] in self?.heartbeatTick() }
        self.timer = timer
        timer.resume()
    }

    /// Adds an admitted stream (on the hub's queue, so no state falls between registering and catching up) and
    /// sends it what it is missing.
    package func subscribe(_ stream: ResponseStream, request: StreamRequest) {
        queue.async { [self] in
            switch lifecycle.subscribe() {
            case .refuse(let reason):
                if let reason { stream.write(StreamFrame.ended(reason)) }
                stream.finish()
                release()
                registry.metrics.closed(reason.map(Self.closeReason) ?? .shutdown)
                return
            case .handOver:
                return handOver(stream, request: request)
            case .add(let follow):
                if follow { self.follow() }
            }
            let now = DispatchTime.now().uptimeNanoseconds
            let view = view(for: request.select)
            view.subscriberCount += 1
            let subscriber = StreamSubscriber(
                stream: stream,
                view: view,
                mode: request.mode,
                resumeFrom: request.lastEventID,
                now: now
            )
            subscriber.index = subscribers.count
            subscribers.append(subscriber)
            stream.onClose { [weak self] reason in
                guard let self else { return }
                queue.async { self.remove(subscriber, reason: Self.closeReason(reason)) }
            }
            stream.onWritable { [weak self] in
                guard let self else { return }
                queue.async { self.catchUp(subscriber) }
            }
            if let expiry = request.tokenExpiry { reauthLater(subscriber, at: expiry) }
            bringUpToDate(CollectionOfOne(subscriber), waitForIdle: false)
        }
    }

    /// At the expiry of the token a stream was opened with (seconds since 1970): `event: reauth`, then the close.
    /// One timer per stream with a token, on the hub's queue; a stream gone before does nothing then.
    private func reauthLater(_ subscriber: StreamSubscriber, at expiry: Double) {
        let delay = max(0, expiry - Date().timeIntervalSince1970)
        queue.asyncAfter(deadline: .now() + .nanoseconds(Int(delay * 1_000_000_000))) {
            [weak self, weak subscriber] in
            guard let self, let subscriber, !subscriber.closed else { return }
            reauth(subscriber)
        }
    }

    /// Every stream gets `event: reauth` and closes (the session's tokens were revoked).
    func reauthAll() {
        queue.async { [self] in
            for subscriber in subscribers { reauth(subscriber) }
        }
    }

    private func reauth(_ subscriber: StreamSubscriber) {
        dispatchPrecondition(condition: .onQueue(queue))
        subscriber.stream.write(StreamFrame.reauth)
        subscriber.stream.finish()
        detach(subscriber)
        registry.metrics.sent(events: 1, bytes: StreamFrame.reauth.count)
        registry.metrics.closed(.tokenExpired)
    }

    /// A stream admitted here just before the hub retired: the session's current hub takes it.
    private func handOver(_ stream: ResponseStream, request: StreamRequest) {
        handedOver()
        guard let session else {
            // The session is gone and so is its registry entry: the stream ends as its other streams did.
            stream.write(StreamFrame.ended(.deleted))
            stream.finish()
            registry.release()
            registry.metrics.closed(.deleted)
            return
        }
        let hub = registry.hub(for: session)
        hub.adopt()
        hub.subscribe(stream, request: request)
    }

    private func view(for select: [JSONPointer]) -> StreamView {
        guard !select.isEmpty else { return whole }
        let key = StreamView.key(select)
        if let view = selections[key] { return view }
        let view = StreamView(epoch: epoch, select: select, schema: whole.schema)
        view.seed(from: whole)
        selections[key] = view
        return view
    }

    /// Forgets a subscriber whose stream ended other than by the hub.
    private func remove(_ subscriber: StreamSubscriber, reason: StreamMetrics.CloseReason) {
        dispatchPrecondition(condition: .onQueue(queue))
        guard !subscriber.closed else { return }
        detach(subscriber)
        registry.metrics.closed(reason)
    }

    private func detach(_ subscriber: StreamSubscriber) {
        if subscriber.behind { behindCount -= 1 }
        subscriber.state.close()
        let last = subscribers.removeLast()
        if last !== subscriber {
            subscribers[subscriber.index] = last
            last.index = subscriber.index
        }
        let view = subscriber.view
        view.subscriberCount -= 1
        if view !== whole, view.subscriberCount == 0 {
            selections[StreamView.key(view.select)] = nil
        }
        if subscribers.isEmpty { retireLater() }
        release()
    }

    private static func closeReason(_ reason: ResponseStream.CloseReason) -> StreamMetrics.CloseReason {
        switch reason {
        case .clientGone: .client
        case .writeStalled: .stalled
        case .serverShutdown: .shutdown
        }
    }

    private static func closeReason(_ reason: StreamFrame.EndReason) -> StreamMetrics.CloseReason {
        switch reason {
        case .deleted: .deleted
        case .expired: .expired
        case .moved: .moved
        }
    }

    private func heartbeatTick() {
        let now = DispatchTime.now().uptimeNanoseconds
        let idleNanoseconds = UInt64(registry.configuration.heartbeat.wholeNanoseconds)
        var idle: [ResponseStream] = []
        catchUpBehind()
        for subscriber in subscribers where !subscriber.closed && !subscriber.behind {
            if now &- subscriber.lastWrite >= idleNanoseconds, subscriber.stream.isWritable {
                idle.append(subscriber.stream)
                subscriber.lastWrite = now
            }
        }
        let count = idle.count
        if count > 0 {
            ResponseStream.write(StreamFrame.heartbeat, to: idle)
            registry.metrics.heartbeats.increment(by: count)
            registry.metrics.bytes.increment(by: count * StreamFrame.heartbeat.count)
        }
    }

    /// Ends every stream with `event: ended` and the reason (or `event: moved`), then closes them; streams opened later
    /// end at once. Without a reason (shutdown) the streams close without an event, and clients reconnect elsewhere.
    func end(_ reason: StreamFrame.EndReason?) {
        queue.async { [self] in
            guard lifecycle.end(reason) else { return }
            unfollow()
            let frame = reason.map(StreamFrame.ended) ?? []
            let streams = subscribers
            for subscriber in streams {
                subscriber.stream.write(frame)
                subscriber.stream.finish()
                detach(subscriber)
            }
            if let reason {
                registry.metrics.sent(events: streams.count, bytes: streams.count * frame.count)
                registry.metrics.closed(Self.closeReason(reason), count: streams.count)
            } else {
                registry.metrics.closed(.shutdown, count: streams.count)
            }
            registry.remove(self)
        }
    }

    /// Closes every stream at times spread evenly over `window` (shutdown), the last at its end, then calls
    /// `done`: while streams remain, the server keeps answering (readiness failing) for the whole window, so a
    /// load balancer has time to notice.
    func drain(over window: Duration, done: @escaping @Sendable () -> Void) {
        queue.async { [self] in
            lifecycle.drain()
            let streams = subscribers.shuffled()
            guard !streams.isEmpty else { return done() }
            let slices = min(streams.count, 50)
            let step = window / slices
            for slice in 0..<slices {
                let delay = (step * (slice + 1)).wholeNanoseconds
                queue.asyncAfter(deadline: .now() + .nanoseconds(delay)) { [self] in
                    var closed = 0
                    for index in stride(from: slice, to: streams.count, by: slices) where !streams[index].closed {
                        streams[index].stream.finish()
                        detach(streams[index])
                        closed += 1
                    }
                    registry.metrics.closed(.shutdown, count: closed)
                    if slice == slices - 1 { done() }
                }
            }
        }
    }
}
