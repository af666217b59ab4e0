/// The shell state of one accepted socket: buffers, the request decoder, the lifecycle machine and the request in
/// progress. What the connection is doing (reading, answering, closing, deadlines) lives in `lifecycle` alone.
///
/// Owned by one `Shard` and touched only on its serial queue (the shard's connection table holds it by fd). The
/// buffers and machines read on every request are `@exclusivity(unchecked)`: one thread, and no access to one of them
/// overlaps another to the same (what the run-time check would trap), so each access skips the check's bookkeeping.
final class Connection {
    /// A request whose head is decoded and whose body is still arriving.
    struct PendingBody {
        /// The request as it will be handed to its route: the body arrives into it, and it moves out whole at the
        /// end (taking its head, parameters and body field by field copied each of them).
        var request: Request
        /// The route, or nil when the answer was already given (404/405) and the body is discarded.
        var route: Router.Route?
    }

    // Declared in the order a fan-out's write reads them (a class keeps its fields in this order): what
    // `Shard.streamWrite` touches of each subscriber's connection lies in its first few cache lines.
    let fd: Int32
    let id: UInt64
    var stream: ResponseStream?
    var streamChunked = false
    /// epoll interest as last registered.
    var writeInterest = false
    var readPaused = false
    /// gzip for the streaming response, one sync flush per write; owned by the shard queue.
    var streamEncoder: GzipEncoder?
    @exclusivity(unchecked)
    var output: [UInt8] = []
    @exclusivity(unchecked)
    var outputStart = 0
    @exclusivity(unchecked)
    var lifecycle: ConnectionLifecycle
    @exclusivity(unchecked)
    var input: [UInt8] = []
    @exclusivity(unchecked)
    var inputStart = 0
    @exclusivity(unchecked)
    var decoder: RequestDecoder
    @exclusivity(unchecked)
    var pendingBody: PendingBody?
    /// The head of the request being answered when its answer comes after its handler returned: `deliver` takes
    /// it to write the late answer (the connection reads no other request meanwhile); set for a stream too. Only what
    /// the answer reads of the request is kept (`LateRequest`).
    @exclusivity(unchecked)
    var respondingTo: LateRequest?
    /// The route the request being answered was handed to (nil: none, e.g. a 404), for its access line. Not
    /// retained: the routes are the server's router's (`ServerCore.router`, a constant), which outlives every
    /// connection of its shards, and holding it cost a post four reference counts.
    @exclusivity(unchecked)
    unowned(unsafe) var route: Router.Route?
    /// Monotonic nanoseconds at which the current head was parsed; 0 once its response is timed (or before any).
    @exclusivity(unchecked)
    var requestStart: UInt64 = 0
    /// Index in the shard's list of live connections.
    var slot = 0

    init(fd: Int32, id: UInt64, decoder: RequestDecoder, lifecycle: ConnectionLifecycle) {
        self.fd = fd
        self.id = id
        self.decoder = decoder
        self.lifecycle = lifecycle
        // No reserved capacity: the buffers grow to what the connection uses and keep it. A long-lived stream
        // with small events then costs a few hundred bytes of buffers, not 8 KiB.
    }

    var hasPendingOutput: Bool { outputStart < output.count }
    var bufferedInput: Int { input.count - inputStart }

    func compactInput() {
        if inputStart == input.count {
            input.removeAll(keepingCapacity: true)
        } else if inputStart > 0 {
            input.removeFirst(inputStart)
        }
        inputStart = 0
    }
}
