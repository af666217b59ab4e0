import Dispatch
package import Metrics
import Synchronization
package import Upstream

/// Bounds the rate at which activated sessions restart their upstream fetches (`session.activation.rate`), so that
/// thousands of sessions activated together (after a restart, when a crowd of clients returns, when sessions move
/// to this replica) do not all fetch from the upstream in the same second.
///
/// Each activation gets an upstream of its own (`upstream(for:)`). Its first fetch takes a turn from one token
/// bucket shared by every activation (`WakeBudget.reserve`): at most `rate` turns a second, a second's worth at
/// once, in the order asked. That fetch and any other the session starts meanwhile wait for the turn; later ones
/// go straight through. A session that fetches nothing takes no turn; reading, posting and streaming are never
/// held back, and a new session is not throttled. Cancelling the session cancels a wait like a fetch.
package final class ActivationThrottle: Sendable {
    private let budget: Mutex<WakeBudget>
    /// How long first fetches waited for their turn (`feedbackhost_activation_fetch_wait_seconds`).
    private let waits: Timer
    let rate: Int

    /// `rate` first fetches a second at most; 0 for no bound.
    package init(rate: Int, waits: Timer) {
        self.rate = rate
        budget = Mutex(WakeBudget(rate: rate, now: DispatchTime.now().uptimeNanoseconds))
        self.waits = waits
    }

    /// The upstream an activated session's feedbacks use: `base`, its first fetch waiting for a turn.
    package func upstream(for base: any UpstreamFetching) -> any UpstreamFetching {
        rate == 0 ? base : ThrottledUpstream(base: base, throttle: self, turn: Turn())
    }

    /// The uptime (nanoseconds) at which a turn taken now comes.
    fileprivate func take() -> UInt64 {
        let now = DispatchTime.now().uptimeNanoseconds
        let wait = budget.withLock { $0.reserve(now: now) }
        waits.recordNanoseconds(Int64(clamping: wait))
        return now + wait
    }
}

/// One activation's turn: taken by its first fetch, shared by the fetches that start before it comes.
private final class Turn: Sendable {
    private let at = Mutex<UInt64?>(nil)

    /// When the turn comes, taking it from `throttle` at the first call.
    func comes(from throttle: ActivationThrottle) -> UInt64 {
        at.withLock { at in
            if let at { return at }
            let taken = throttle.take()
            at = taken
            return taken
        }
    }
}

/// An activated session's upstream: waits for the activation's turn, then fetches from `base`.
private struct ThrottledUpstream: UpstreamFetching {
    let base: any UpstreamFetching
    let throttle: ActivationThrottle
    let turn: Turn

    func fetch(_ request: UpstreamRequest) async throws -> UpstreamResponse {
        let comes = turn.comes(from: throttle)
        let now = DispatchTime.now().uptimeNanoseconds
        if comes > now { try await Task.sleep(for: .nanoseconds(comes - now)) }
        return try await base.fetch(request)
    }
}
