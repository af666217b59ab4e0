/// The lifecycle of one connection as a value-type state machine: which phase it is in, which deadline applies,
/// and whether it may stay open. Its methods take events and return what the shell must do.
///
/// Owned by one `Connection` and mutated only on that connection's shard queue; tests drive it directly.
struct ConnectionLifecycle: Sendable, Equatable {
    enum Phase: Sendable, Equatable {
        /// Keep-alive: waiting for the first byte of the next request.
        case idle
        /// Bytes of a head arrived; waiting for the rest.
        case readingHead
        /// Reading a request body.
        case readingBody
        /// A handler is working on the request (synchronously or in a Task).
        case responding
        /// A streaming response is being written.
        case streaming
        /// Output is flushed or flushing, then the write side is shut and input is discarded until EOF.
        case closing
    }

    /// What the shell must do after an event.
    enum Action: Sendable, Equatable {
        case none
        /// Close the socket now.
        case close
        /// Flush queued output, shut the write side, then close on EOF or at the linger deadline.
        case closeAfterFlush
        /// End the streaming response (graceful shutdown), then close after flushing.
        case endStream
    }

    struct Timeouts: Sendable, Equatable {
        var header: UInt64
        var body: UInt64
        var idle: UInt64
        var linger: UInt64
    }

    private(set) var phase: Phase = .idle
    /// Monotonic nanoseconds after which `tick` closes; `.max` when no read deadline applies.
    private(set) var deadline: UInt64
    private(set) var keepAlive = true
    private(set) var draining = false
    private(set) var inputClosed = false
    /// Whether the client may still be sending when the response is out: then the write side is shut first
    /// and input discarded until EOF, so that a reset does not destroy the response.
    private(set) var lingers = false
    let timeouts: Timeouts

    init(timeouts: Timeouts, now: UInt64) {
        self.timeouts = timeouts
        self.deadline = now &+ timeouts.idle
    }

    /// Whether the shell may parse another request from buffered input.
    var acceptsRequests: Bool { phase == .idle || phase == .readingHead || phase == .readingBody }

    mutating func bytesReceived(now: UInt64) {
        if phase == .idle {
            phase = .readingHead
            deadline = now &+ timeouts.header
        } else if phase == .readingBody {
            deadline = now &+ timeouts.body
        }
    }

    mutating func headParsed(now: UInt64, hasBody: Bool, keepAlive requestKeepAlive: Bool) {
        keepAlive = keepAlive && requestKeepAlive
        if hasBody {
            phase = .readingBody
            deadline = now &+ timeouts.body
        } else {
            phase = .responding
            deadline = .max
        }
    }

    mutating func bodyCompleted() {
        phase = .responding
        deadline = .max
    }

    mutating func disableKeepAlive() {
        keepAlive = false
    }

    mutating func streamingStarted() {
        phase = .streaming
    }

    /// A response (whole or stream) has been queued completely.
    mutating func responseFinished(now: UInt64, hasBufferedInput: Bool) -> Action {
        if !keepAlive || draining || (inputClosed && !hasBufferedInput) {
            lingers = hasBufferedInput
            return startClosing(now: now)
        }
        phase = hasBufferedInput ? .readingHead : .idle
        deadline = now &+ (hasBufferedInput ? timeouts.header : timeouts.idle)
        return .none
    }

    /// The request cannot be served further (parse error, limit): answer and close.
    mutating func requestFailed(now: UInt64) -> Action {
        keepAlive = false
        lingers = true
        return startClosing(now: now)
    }

    private mutating func startClosing(now: UInt64) -> Action {
        keepAlive = false
        phase = .closing
        deadline = now &+ timeouts.linger
        return .closeAfterFlush
    }

    /// The peer shut its write side (EOF or EPOLLRDHUP) and no buffered request can make progress: answers
    /// already queued still go out; a stream's client is gone; a handler at work still answers.
    mutating func inputEnded(now: UInt64) -> Action {
        inputClosed = true
        switch phase {
        case .idle, .readingHead, .readingBody:
            lingers = false
            return startClosing(now: now)
        case .streaming: return .close
        case .responding, .closing: return .none
        }
    }

    /// A read deadline may have passed.
    func tick(now: UInt64) -> Action {
        now >= deadline && phase != .responding && phase != .streaming ? .close : .none
    }

    /// Graceful shutdown: idle connections close now, requests in flight finish, streams are told to end.
    mutating func shutdownRequested() -> Action {
        draining = true
        keepAlive = false
        switch phase {
        case .idle: return .close
        case .streaming: return .endStream
        case .readingHead, .readingBody, .responding, .closing: return .none
        }
    }
}
