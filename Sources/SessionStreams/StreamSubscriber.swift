import HTTPServer

/// One open stream of a session: the response it writes to, the view it reads, and its `SubscriberState`.
///
/// Not thread-safe: owned by its `StreamHub`'s queue (it is `Sendable` only so that stream callbacks can carry it
/// back to that queue).
final class StreamSubscriber: @unchecked Sendable {
    let stream: ResponseStream
    let view: StreamView
    /// Its fields are the hub queue's alone (above): no dynamic exclusivity check per subscriber of a fan-out, where
    /// a decision (`SubscriberState.next`) calls back into the hub's closures while the state is being changed.
    @exclusivity(unchecked)
    var state: SubscriberState
    /// When something was last written (uptime nanoseconds), for heartbeats.
    @exclusivity(unchecked)
    var lastWrite: UInt64
    /// Position in the hub's subscriber array.
    @exclusivity(unchecked)
    var index = 0

    init(stream: ResponseStream, view: StreamView, mode: StreamRequest.Mode, resumeFrom: String?, now: UInt64) {
        self.stream = stream
        self.view = view
        state = SubscriberState(mode: mode, resumeFrom: resumeFrom)
        lastWrite = now
    }

    /// Held back since its last frame.
    var behind: Bool { state.behind }

    /// Ended by the hub or gone.
    var closed: Bool { state.closed }
}
