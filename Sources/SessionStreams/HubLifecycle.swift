import SessionRuntime

/// Where a stream hub is in its life, and what each turn asks the hub to do: a value-type state machine with no
/// I/O and no clock, driven by `StreamHub` on its queue and tested without sockets.
///
/// ```
/// idle ──subscribe──▶ following ──last subscriber left──▶ lingering ──linger ended──▶ retired
///                         ▲                                   │
///                         └────────────subscribe──────────────┘
/// any phase but ended ──end(reason)──▶ ended          any phase but ended ──drain──▶ draining
/// ```
/// A hub follows its session's loop from its first subscriber until it retires or ends. A retired hub has left the
/// registry: a stream admitted just before goes to the session's next hub. An ended hub (session deleted or expired,
/// or the server's end) refuses every stream with the reason. A draining hub (the server shutting down) closes its
/// streams over a window and takes no new one.
package struct HubLifecycle: Sendable, Equatable {
    /// The phase of the hub's life.
    package enum Phase: Sendable, Equatable {
        /// Made for a stream that has not subscribed yet: not following the session.
        case idle
        /// Following the session, with subscribers.
        case following
        /// Following, without subscribers, until the linger with this number ends or a stream comes.
        case lingering(UInt64)
        /// Left the registry after its linger: no longer following.
        case retired
        /// No state is sent any more; nil is the server's end (streams close without an event).
        case ended(StreamFrame.EndReason?)
        /// The server is shutting down: the hub closes its streams over a window and takes no new one.
        case draining
    }

    /// What the hub does with a stream that subscribes.
    package enum Subscription: Sendable, Equatable {
        /// Adds it; `follow` says the hub starts following its session first.
        case add(follow: Bool)
        /// Gives it to the session's current hub.
        case handOver
        /// Ends it at once: with `event: ended` and the reason when there is one, else only closed.
        case refuse(StreamFrame.EndReason?)
    }

    package private(set) var phase = Phase.idle
    /// Numbers the lingers, so that one that ends after a stream came and went again does nothing.
    private var lingers: UInt64 = 0

    package init() {}

    /// Whether the hub still sends states to its subscribers.
    package var isEnded: Bool {
        if case .ended = phase { return true }
        return false
    }

    /// A stream subscribes.
    package mutating func subscribe() -> Subscription {
        switch phase {
        case .idle:
            phase = .following
            return .add(follow: true)
        case .following, .lingering:
            phase = .following
            return .add(follow: false)
        case .retired:
            return .handOver
        case .ended(let reason):
            return .refuse(reason)
        case .draining:
            return .refuse(nil)
        }
    }

    /// The last subscriber left: returns the number of the linger to schedule, or nil when the hub does not linger
    /// (it ended, or the server is draining).
    package mutating func lastSubscriberLeft() -> UInt64? {
        guard phase == .following else { return nil }
        lingers &+= 1
        phase = .lingering(lingers)
        return lingers
    }

    /// The linger `number` ended: true when the hub retires now (stops following, leaves the registry).
    package mutating func lingerEnded(_ number: UInt64) -> Bool {
        guard phase == .lingering(number) else { return false }
        phase = .retired
        return true
    }

    /// The session ended (`reason`) or the server did (nil): true when the hub ends its streams now, false when it
    /// had ended before.
    package mutating func end(_ reason: StreamFrame.EndReason?) -> Bool {
        if isEnded { return false }
        phase = .ended(reason)
        return true
    }

    /// The server begins its shutdown: the hub closes its streams over the window (an ended hub has none).
    package mutating func drain() {
        if !isEnded { phase = .draining }
    }
}
