/// The lifecycle of one connection as a value-type state machine: which phase it is in, which deadlines apply
/// (reading, and writing to a client that does not read), whether it may stay open, whether the peer's input ended
/// and whether our write side is shut. A body has a total deadline from the end of its head and, after a grace
/// period, a minimum average rate; missing either is answered 408 and closed (`Action.timeOut`). Its methods take
/// events and return the `Action` the shell must perform; `Shard.perform` switches on every one. The shell keeps no
/// flag of its own about any of this.
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
        /// Nothing.
        case none
        /// Close the socket now; a streaming response's `onClose` gets `reason`.
        case close(ResponseStream.CloseReason)
        /// Send queued output now; `outputFlushed` then says how the connection ends.
        case closeAfterFlush
        /// Output is out: shut the write side, and discard input until EOF or the linger deadline.
        case shutdownWrite
        /// End the streaming response (graceful shutdown), then close after flushing.
        case endStream
        /// The body came too slowly (total deadline or minimum rate): queue a 408 answer unless the request was
        /// answered already (an early 404/405 whose body is discarded), then send it; the connection is closing
        /// as after a failed request (`outputFlushed` says how it ends).
        case timeOut
    }

    struct Timeouts: Sendable, Equatable {
        var header: UInt64
        /// From the end of a head to the end of its body, however the bytes trickle.
        var body: UInt64
        var idle: UInt64
        var linger: UInt64
        /// How long queued output may wait on a client that does not read.
        var write: UInt64
        /// Bytes per second a body must average from the end of its head, once `bodyGrace` has passed; 0: none.
        var minBodyRate: UInt64 = 0
        /// How long a body may take before `minBodyRate` applies.
        var bodyGrace: UInt64 = 0
    }

    private(set) var phase: Phase = .idle
    /// Monotonic nanoseconds after which `tick` closes; `.max` when no read deadline applies.
    private(set) var deadline: UInt64
    /// Monotonic nanoseconds after which output that does not move closes the connection; `.max` when none waits.
    private(set) var stallDeadline: UInt64 = .max
    private(set) var keepAlive = true
    /// The peer shut its write side (EOF).
    private(set) var inputClosed = false
    /// Our write side is shut (the connection is closing and its output went out).
    private(set) var writeShut = false
    /// Whether the client may still be sending when the response is out: then the write side is shut first
    /// and input discarded until EOF, so that a reset does not destroy the response.
    private(set) var lingers = false
    /// When the head of the request whose body is being read ended (monotonic nanoseconds).
    private(set) var bodyStart: UInt64 = 0
    /// Bytes received since that head ended (its body, and whatever the client pipelined after it).
    private(set) var bodyBytes: UInt64 = 0
    let timeouts: Timeouts

    init(timeouts: Timeouts, now: UInt64) {
        self.timeouts = timeouts
        self.deadline = now &+ timeouts.idle
    }

    /// Whether the shell may decode another request from buffered input.
    var acceptsRequests: Bool { phase == .idle || phase == .readingHead || phase == .readingBody }

    /// Whether bytes read now are thrown away (the connection is closing).
    var discardsInput: Bool { phase == .closing }

    /// `count` bytes arrived. The first byte of a head starts the header deadline; a body's bytes count towards its
    /// rate, but never move its deadline (a client dripping a byte at a time must not hold the connection).
    mutating func bytesReceived(_ count: Int, now: UInt64) {
        if phase == .idle {
            phase = .readingHead
            deadline = now &+ timeouts.header
        } else if phase == .readingBody {
            bodyBytes &+= UInt64(max(0, count))
        }
    }

    /// A head was decoded; `bufferedBytes` of input that arrived with it follow it (the start of its body).
    mutating func headParsed(now: UInt64, hasBody: Bool, keepAlive requestKeepAlive: Bool, bufferedBytes: Int = 0) {
        keepAlive = keepAlive && requestKeepAlive
        if hasBody {
            phase = .readingBody
            deadline = now &+ timeouts.body
            bodyStart = now
            bodyBytes = UInt64(max(0, bufferedBytes))
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
        if !keepAlive || (inputClosed && !hasBufferedInput) {
            lingers = hasBufferedInput
            return startClosing(now: now)
        }
        phase = hasBufferedInput ? .readingHead : .idle
        deadline = now &+ (hasBufferedInput ? timeouts.header : timeouts.idle)
        return .none
    }

    /// The request cannot be served further (parse error, limit): answer and close.
    mutating func requestFailed(now: UInt64) -> Action {
        lingers = true
        return startClosing(now: now)
    }

    private mutating func startClosing(now: UInt64, linger: UInt64? = nil) -> Action {
        keepAlive = false
        phase = .closing
        deadline = now &+ (linger ?? timeouts.linger)
        return .closeAfterFlush
    }

    /// The longest a connection lingers after a 408: long enough for the answer to be read, short enough that a
    /// client still dripping bytes does not hold its slot for the whole linger time.
    static let timeOutLinger: UInt64 = 1_000_000_000

    /// The peer shut its write side (a read returned 0). While closing, the connection ends once its output is
    /// out; otherwise buffered requests are served first and `served` decides.
    mutating func inputEnded() -> Action {
        inputClosed = true
        guard phase == .closing else { return .none }
        return writeShut ? .close(.clientGone) : .closeAfterFlush
    }

    /// The shell answered what buffered input allows; `blocked` when buffered requests wait for the client to
    /// read output first. After EOF, the connection starts closing once nothing buffered can make progress:
    /// answers already queued still go out; a stream's client is gone; a handler at work still answers.
    mutating func served(now: UInt64, blocked: Bool) -> Action {
        guard inputClosed, !blocked else { return .none }
        switch phase {
        case .idle, .readingHead, .readingBody:
            lingers = false
            return startClosing(now: now)
        case .streaming: return .close(.clientGone)
        case .responding, .closing: return .none
        }
    }

    /// Some output was sent: the client reads, so the write deadline starts again.
    mutating func outputSent(now: UInt64) {
        stallDeadline = now &+ timeouts.write
    }

    /// The socket takes no more output for now; the write deadline runs from the first time this happens.
    mutating func outputBlocked(now: UInt64) {
        if stallDeadline == .max { stallDeadline = now &+ timeouts.write }
    }

    /// Every queued byte is sent. A closing connection then shuts its write side, and closes at once unless it
    /// lingers for a client that may still be sending.
    mutating func outputFlushed() -> Action {
        stallDeadline = .max
        guard phase == .closing, !writeShut else { return .none }
        writeShut = true
        return inputClosed || !lingers ? .close(.clientGone) : .shutdownWrite
    }

    /// A deadline may have passed: a read deadline (not while a handler or a stream works), or the write deadline.
    /// A body past its deadline or below its minimum rate is answered 408: the connection starts closing.
    mutating func tick(now: UInt64) -> Action {
        if phase == .readingBody, now >= deadline || bodyTooSlow(now: now) {
            lingers = true
            _ = startClosing(now: now, linger: min(timeouts.linger, Self.timeOutLinger))
            return .timeOut
        }
        if now >= deadline, phase != .responding, phase != .streaming { return .close(.clientGone) }
        if now >= stallDeadline { return .close(.writeStalled) }
        return .none
    }

    /// Whether the body, past its grace period, averages fewer than `minBodyRate` bytes per second since its head.
    func bodyTooSlow(now: UInt64) -> Bool {
        guard timeouts.minBodyRate > 0, now > bodyStart else { return false }
        let elapsed = now - bodyStart
        guard elapsed >= timeouts.bodyGrace else { return false }
        return Double(bodyBytes) * 1e9 < Double(timeouts.minBodyRate) * Double(elapsed)
    }

    /// Graceful shutdown (quiescing): idle connections close now, requests in flight finish and close, streams are
    /// told to end.
    mutating func shutdownRequested() -> Action {
        keepAlive = false
        switch phase {
        case .idle: return .close(.serverShutdown)
        case .streaming: return .endStream
        case .readingHead, .readingBody, .responding, .closing: return .none
        }
    }
}
