import CoreMetrics
import Dispatch
package import SessionRuntime
import Synchronization

/// What every stream of one server shares: the configuration, the metrics, the count of open streams against the
/// total limit, and the live hubs (for the shutdown drain).
///
/// Thread-safe: the count is atomic, the hub table sits behind a `Mutex` held only to add, remove or list.
package final class StreamRegistry: SessionFollowing {
    package let configuration: StreamConfiguration
    package let metrics: StreamMetrics
    private let open = Atomic<Int>(0)
    private let hubs = Mutex<[SessionID: StreamHub]>([:])

    package init(configuration: StreamConfiguration, metrics: StreamMetrics) {
        self.configuration = configuration
        self.metrics = metrics
    }

    /// Open streams.
    package var openCount: Int { open.load(ordering: .relaxed) }

    /// Counts one more open stream unless the total limit is reached; `StreamHub.admit` asks it first.
    func admit() -> Bool {
        guard open.increment(below: configuration.maxTotal) else { return false }
        metrics.open.increment()
        return true
    }

    /// Counts one stream closed.
    package func release() {
        open.subtract(1, ordering: .relaxed)
        metrics.open.decrement()
    }

    /// The session's hub, made on first use; it follows the session's states while it has subscribers.
    package func hub(for session: any HostedSession) -> StreamHub {
        let id = session.id
        if let hub = hubs.withLock({ $0[id] }) { return hub }
        let epoch = session.snapshot().cursor.epoch
        return hubs.withLock { hubs in
            if let hub = hubs[id] { return hub }
            let hub = StreamHub(session: session, epoch: epoch, registry: self)
            hubs[id] = hub
            return hub
        }
    }

    /// Whether the session has a hub: streams are open, or the last one closed less than the linger ago.
    package func isFollowing(_ id: SessionID) -> Bool {
        hubs.withLock { $0[id] != nil }
    }

    /// The sessions with a hub now.
    package var followed: [SessionID] {
        hubs.withLock { Array($0.keys) }
    }

    /// Sends `event: reauth` to every open stream of a session and closes them (its tokens were revoked): each
    /// client reconnects with the token it has, and only those still valid get back in.
    package func reauth(_ id: SessionID) {
        hubs.withLock { $0[id] }?.reauthAll()
    }

    /// Ends the streams of a session that ended (deleted or expired: `event: ended`) or left this replica (`event:
    /// moved`, so that clients resume at once where the balancer sends them). With no reason (shutdown) the streams
    /// just close.
    package func end(_ id: SessionID, reason: StreamFrame.EndReason?) {
        hubs.withLock { $0.removeValue(forKey: id) }?.end(reason)
    }

    /// Forgets a hub that ended.
    func remove(_ hub: StreamHub) {
        hubs.withLock { hubs in
            if hubs[hub.id] === hub { hubs[hub.id] = nil }
        }
    }

    /// Closes every open stream at times spread evenly over `window`; returns when all are closed.
    package func drain(over window: Duration) async {
        let live = hubs.withLock { Array($0.values) }
        await withTaskGroup(of: Void.self) { group in
            for hub in live {
                group.addTask {
                    await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
                        hub.drain(over: window) { done.resume() }
                    }
                }
            }
        }
    }
}
