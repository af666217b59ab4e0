/// How many passive sessions the timer waker may activate now: a token bucket that fills at `rate` per second up
/// to one second's worth, so that a restart, or a moment when many deadlines fall together, wakes at most `rate`
/// sessions a second (each restarts its effects, upstream fetches among them) instead of all of them at once.
///
/// A value type driven with explicit times (uptime nanoseconds), so tests need no clock.
package struct WakeBudget: Sendable {
    /// Wake-ups per second; 0 for no bound.
    let rate: Int
    private var tokens: Double
    private var filled: UInt64

    package init(rate: Int, now: UInt64) {
        self.rate = rate
        tokens = Double(rate)
        filled = now
    }

    /// Takes one wake-up if the bucket holds one at `now`.
    package mutating func take(now: UInt64) -> Bool {
        guard rate > 0 else { return true }
        refill(now: now)
        guard tokens >= 1 else { return false }
        tokens -= 1
        return true
    }

    /// Nanoseconds from `now` until the next wake-up is allowed (0 when one is).
    package mutating func wait(now: UInt64) -> UInt64 {
        guard rate > 0 else { return 0 }
        refill(now: now)
        return tokens >= 1 ? 0 : UInt64((1 - tokens) / Double(rate) * 1e9) + 1
    }

    private mutating func refill(now: UInt64) {
        let elapsed = Double(now &- filled) / 1e9
        filled = now
        tokens = min(Double(rate), tokens + elapsed * Double(rate))
    }
}

extension WakeBudget {
    /// Takes the next turn whether or not the bucket holds one now, and answers how many nanoseconds from `now`
    /// that turn comes (0 when at once): callers that must all get a turn (an activated session's first upstream
    /// fetch) wait that long, one after another at `rate` a second, in the order they asked.
    package mutating func reserve(now: UInt64) -> UInt64 {
        guard rate > 0 else { return 0 }
        let wait = self.wait(now: now)
        tokens -= 1
        return wait
    }
}
