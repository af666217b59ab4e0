import HTTPServer

/// One open stream of a session: the response it writes to, the view it reads and what its client has.
///
/// Constant size whatever the client's speed: a client that falls behind is marked `dirty` and later gets only
/// the latest value. Not thread-safe: owned by its `StreamHub`'s queue (it is `Sendable` only so that
/// stream callbacks can carry it back to that queue).
final class StreamSubscriber: @unchecked Sendable {
    let stream: ResponseStream
    let view: StreamView
    let mode: StreamRequest.Mode
    /// The view revision the client has; nil before its first snapshot.
    var sentRev: UInt64?
    /// The cursor the client resumes from, until the first state decides what it gets.
    var resumeFrom: String?
    /// An event was held back because the client did not keep up; it gets the latest when it catches up.
    var dirty = false
    /// When something was last written (uptime nanoseconds), for heartbeats.
    var lastWrite: UInt64
    /// Position in the hub's subscriber array.
    var index = 0
    /// Ended by the hub or gone; nothing more is written.
    var closed = false

    init(stream: ResponseStream, view: StreamView, mode: StreamRequest.Mode, resumeFrom: String?, now: UInt64) {
        self.stream = stream
        self.view = view
        self.mode = mode
        self.resumeFrom = resumeFrom
        lastWrite = now
    }
}
