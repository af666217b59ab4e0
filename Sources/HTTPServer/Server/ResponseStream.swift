import Dispatch
import Synchronization

/// The writable body of a streaming response (chunked on HTTP/1.1, close-delimited on HTTP/1.0).
///
/// Thread-safe: any thread may call any method. Writes hop to the connection's shard queue, which owns the socket;
/// the byte counts and callbacks live behind a `Mutex`. Callbacks (`onWritable`, `onClose`) run on the shard queue
/// and must not block. After the client goes away, writes are dropped and `isClosed` is true.
public final class ResponseStream: Sendable {
    /// Why a stream ended before `finish()`.
    public enum CloseReason: Sendable, Equatable {
        /// The client closed its connection or reset it.
        case clientGone
        /// The client stopped reading and the write timeout passed.
        case writeStalled
        /// The server is shutting down; the stream was ended cleanly.
        case serverShutdown
    }

    struct State {
        var queuedBytes = 0
        var bufferedBytes = 0
        var closed = false
        var finished = false
        var wasAboveHighWater = false
        var onWritable: (@Sendable () -> Void)?
        var onClose: (@Sendable (CloseReason) -> Void)?
    }

    let shard: Shard
    let fd: Int32
    let connectionID: UInt64
    /// Pending bytes above which `isWritable` turns false.
    public let highWaterMark: Int
    let state = Mutex(State())
    /// `isIdle`, stored under `state`'s lock by every change of the byte counts, so that a fan-out's pass reads it
    /// without taking the lock (one lock a subscriber fewer).
    private let idle = Atomic<Bool>(true)

    init(shard: Shard, fd: Int32, connectionID: UInt64, highWaterMark: Int) {
        self.shard = shard
        self.fd = fd
        self.connectionID = connectionID
        self.highWaterMark = highWaterMark
    }

    /// Bytes written but not yet accepted by the kernel.
    public var pendingByteCount: Int { state.withLock { $0.queuedBytes + $0.bufferedBytes } }

    /// Whether the client keeps up: false while more than `highWaterMark` bytes wait. A producer that may
    /// drop data should then keep only the latest state and write it from `onWritable`.
    public var isWritable: Bool { pendingByteCount <= highWaterMark }

    /// Whether the stream has ended (finished, client gone, or server shutdown).
    public var isClosed: Bool { state.withLock { $0.closed || $0.finished } }

    /// Sets the callback run (on the shard queue) each time pending bytes drop back to half the high-water
    /// mark or less after having exceeded it.
    public func onWritable(_ callback: @escaping @Sendable () -> Void) {
        state.withLock { $0.onWritable = callback }
    }

    /// Sets the callback run once (on the shard queue) when the stream ends other than by `finish()`.
    /// Runs at once if that already happened.
    public func onClose(_ callback: @escaping @Sendable (CloseReason) -> Void) {
        let already = state.withLock { s -> Bool in
            if s.closed { return true }
            s.onClose = callback
            return false
        }
        if already { shard.queue.async { callback(.clientGone) } }
    }

    /// Queues bytes as one chunk. Dropped when the stream has ended.
    public func write(_ bytes: [UInt8]) {
        guard !bytes.isEmpty else { return }
        let accepted = state.withLock { s -> Bool in
            guard !s.closed, !s.finished else { return false }
            s.queuedBytes += bytes.count
            countsChanged(s)
            return true
        }
        guard accepted else { return }
        shard.queue.async { [self] in
            shard.streamWrite(CollectionOfOne(self), bytes)
        }
    }

    /// Whether the next write goes out at once: no earlier write still waits for the shard, and the pending bytes
    /// are within `highWaterMark`. A producer that keeps only the latest state writes when this is true and
    /// otherwise waits for the completion of its earlier write (or `onWritable`), then writes the latest: every
    /// stream then holds at most one frame that the server has not handed to its connection, however fast states
    /// come, and a client never reads a backlog the server built up while it was busy.
    public var isIdle: Bool {
        idle.load(ordering: .acquiring)
    }

    /// Under `state`'s lock, after a change of its byte counts: what `isIdle` answers from now on.
    private func countsChanged(_ s: State) {
        idle.store(s.queuedBytes == 0 && s.bufferedBytes <= highWaterMark, ordering: .releasing)
    }

    /// Queues the same bytes as one chunk on each of `streams`, with one hop per shard rather than one per stream:
    /// the cheap way to fan one event out to many subscribers. Streams that ended are skipped. `completion`, when
    /// given, runs once every shard has handed the bytes to its connections (on the last shard's queue; it must not
    /// block), and at once on the caller's thread when no stream took them.
    ///
    /// An array, not any sequence: a generic public function is not specialized for its callers in other modules,
    /// and its unspecialized loop allocated once per stream.
    public static func write(
        _ bytes: [UInt8],
        to streams: [ResponseStream],
        completion: (@Sendable () -> Void)? = nil
    ) {
        var fanOut = FanOut(bytes)
        for stream in streams { fanOut.add(stream) }
        fanOut.send(completion: completion)
    }

    /// One frame's fan-out gathered a stream at a time, for a producer that decides stream by stream who gets it
    /// (`StreamHub`): each stream is taken as it is added (its bytes counted as queued, under its lock, unless it
    /// ended) and filed under its shard, so `send` hops once per shard with no second pass over the streams.
    /// `write(_:to:completion:)` is this, over an array.
    package struct FanOut {
        package let bytes: [UInt8]
        /// The streams taken, by shard: a handful of shards, so a linear search beats hashing per stream.
        private var groups: [(shard: Shard, streams: [ResponseStream])] = []
        /// Streams added since the last `send` (taken or not): what a producer sizes its parts by.
        package private(set) var added = 0
        /// The room each shard's list of streams is made with: a part's size, so that it is not grown by doubling.
        private let capacity: Int

        /// `capacity`: how many streams a part may hand one shard (at most), 0 when unknown.
        package init(_ bytes: [UInt8], capacity: Int = 0) {
            self.bytes = bytes
            self.capacity = capacity
        }

        /// Takes `stream` for this fan-out, unless it ended (or the bytes are empty: writers never queue nothing).
        package mutating func add(_ stream: ResponseStream) {
            added += 1
            guard !bytes.isEmpty else { return }
            let count = bytes.count
            let accepted = stream.state.withLock { s -> Bool in
                guard !s.closed, !s.finished else { return false }
                s.queuedBytes += count
                stream.countsChanged(s)
                return true
            }
            guard accepted else { return }
            let shard = stream.shard
            for index in groups.indices where groups[index].shard === shard {
                groups[index].streams.append(stream)
                return
            }
            var streams: [ResponseStream] = []
            streams.reserveCapacity(capacity)
            streams.append(stream)
            groups.append((shard, streams))
        }

        /// Hands the streams taken so far to their shards, one hop each, and starts a new part (the same bytes);
        /// `completion` as in `write(_:to:completion:)`.
        package mutating func send(completion: (@Sendable () -> Void)? = nil) {
            let handed = groups
            groups = []
            added = 0
            guard !handed.isEmpty else {
                completion?()
                return
            }
            let remaining = completion.map { _ in Countdown(handed.count) }
            for (shard, group) in handed {
                shard.queue.async { [bytes] in
                    ResponseStream.writeSlices(of: group, from: 0, bytes, on: shard) {
                        if let remaining, remaining.decrement() { completion?() }
                    }
                }
            }
        }
    }

    /// Streams written per block on a shard's queue: a large fan-out yields between slices, and serves before each
    /// slice what arrived for the shard (`Shard.serveBetweenSlices`), so the answers, requests and accepts of that
    /// shard wait for one slice (about a millisecond), not for the whole fan-out (its timers, blocks of their own on
    /// the queue, still wait for the first slice of each part queued before them).
    static let sliceSize = 128

    /// Writes one slice of `group` on the shard's queue, then queues the next behind whatever arrived meanwhile.
    private static func writeSlices(
        of group: [ResponseStream],
        from start: Int,
        _ bytes: [UInt8],
        on shard: Shard,
        then done: @escaping @Sendable () -> Void
    ) {
        // A part of a slice or more: what arrived for the shard meanwhile goes first (see `serveBetweenSlices`); a
        // small fan-out (a session's few subscribers, a frame each post) pays no `epoll_wait` for it.
        if group.count >= sliceSize { shard.serveBetweenSlices() }
        let end = min(start + sliceSize, group.count)
        shard.streamWrite(group[start..<end], bytes)
        guard end < group.count else { return done() }
        shard.queue.async { writeSlices(of: group, from: end, bytes, on: shard, then: done) }
    }

    /// Writes one server-sent event as one chunk (and one gzip sync flush when compressing).
    public func writeEvent(_ event: ServerSentEvent) {
        write(event.encoded)
    }

    /// Writes an SSE comment (a heartbeat) as one chunk.
    public func writeComment(_ text: String) {
        write(ServerSentEvent.comment(text))
    }

    /// Ends the response (the last chunk); the connection then serves the next request or closes.
    public func finish() {
        let first = state.withLock { s -> Bool in
            guard !s.closed, !s.finished else { return false }
            s.finished = true
            return true
        }
        guard first else { return }
        shard.queue.async { [self] in
            shard.streamFinish(self)
        }
    }

    /// Called on the shard queue when bytes moved from queued to the connection's buffer or out.
    func update(appended: Int, buffered: Int) {
        let callback = state.withLock { s -> (@Sendable () -> Void)? in
            s.queuedBytes -= appended
            s.bufferedBytes = buffered
            countsChanged(s)
            let pending = s.queuedBytes + s.bufferedBytes
            if pending > highWaterMark {
                s.wasAboveHighWater = true
            } else if s.wasAboveHighWater, pending <= highWaterMark / 2 {
                s.wasAboveHighWater = false
                return s.onWritable
            }
            return nil
        }
        callback?()
    }

    /// Called on the shard queue when the connection ends the stream.
    func close(_ reason: CloseReason) {
        let callback = state.withLock { s -> (@Sendable (CloseReason) -> Void)? in
            guard !s.closed else { return nil }
            s.closed = true
            let c = s.onClose
            s.onClose = nil
            s.onWritable = nil
            return s.finished ? nil : c
        }
        callback?(reason)
    }
}
