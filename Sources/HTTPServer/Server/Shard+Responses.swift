import CEpoll
import Dispatch
import Glibc

extension Shard {
    /// Pending output beyond which a connection stops reading and parsing until the client catches up.
    static let outputBacklogLimit = 1 << 20

    /// Serializes a response for `head` into the connection's output.
    /// `finished: false` when the request body must still be discarded before the next request.
    func respond(
        _ response: Response,
        to head: some AnsweredRequest,
        on connection: Connection,
        finished: Bool = true
    ) {
        guard ResponseWriter.isValid(response.headers) else {
            let invalid = Response.problem(status: 500, detail: "The handler produced an invalid header field.")
            return respond(invalid, to: head, on: connection, finished: finished)
        }
        let isHead = head.method == .head
        let bodyless = isHead || response.status == 204 || response.status == 304 || response.status < 200
        let requestStart = connection.requestStart
        server.metrics.record(status: response.status, since: requestStart, now: now)
        connection.requestStart = 0  // timed once; a later failure on this connection has no start
        // The response is not copied to be changed: only a gzip answer gets fields of its own (a copy of them).
        switch response.body {
        case .bytes(let body):
            if !bodyless, let threshold = server.configuration.compressionThreshold, body.count >= threshold,
                Self.wantsGzip(head, response)
            {
                var headers = response.headers
                headers.add(name: "Content-Encoding", value: "gzip")
                headers.add(name: "Vary", value: "Accept-Encoding")
                let gzipped = GzipEncoder(configuration: .body).compress(body, flush: .finish)
                write(response.status, headers, gzipped, bodyless: false, head, connection, requestStart)
            } else {
                write(response.status, response.headers, body, bodyless: bodyless, head, connection, requestStart)
            }
            if finished { finishResponse(connection) }
        case .stream(let start):
            server.logAccess(
                method: head.method,
                path: head.path,
                route: connection.route,
                status: response.status,
                bytes: bodyless ? 0 : nil,
                start: requestStart,
                connection: connection.id
            )
            let chunked = head.minorVersion >= 1
            let gzip = !bodyless && server.configuration.compressStreams && Self.wantsGzip(head, response)
            var headers = response.headers
            if gzip {
                headers.add(name: "Content-Encoding", value: "gzip")
                headers.add(name: "Vary", value: "Accept-Encoding")
            }
            if !chunked { connection.lifecycle.disableKeepAlive() }
            ResponseWriter.appendHead(
                status: response.status,
                headers: headers,
                contentLength: nil,
                chunked: chunked && !bodyless,
                keepAlive: connection.lifecycle.keepAlive,
                minorVersion: head.minorVersion,
                date: date.line,
                to: &connection.output
            )
            if bodyless {
                finishResponse(connection)
                return
            }
            let stream = ResponseStream(
                shard: self,
                fd: connection.fd,
                connectionID: connection.id,
                highWaterMark: server.configuration.streamHighWaterMark
            )
            connection.stream = stream
            connection.streamChunked = chunked
            connection.streamEncoder = gzip ? GzipEncoder(configuration: .streaming) : nil
            connection.respondingTo = LateRequest(head)
            connection.lifecycle.streamingStarted()
            start(stream)
        }
    }

    /// Writes a whole answer (head and body) into the connection's output, and its access line.
    private func write(
        _ status: Int,
        _ headers: HTTPHeaders,
        _ body: [UInt8],
        bodyless: Bool,
        _ head: some AnsweredRequest,
        _ connection: Connection,
        _ requestStart: UInt64
    ) {
        ResponseWriter.appendHead(
            status: status,
            headers: headers,
            contentLength: status == 204 || status == 304 ? nil : body.count,
            chunked: false,
            keepAlive: connection.lifecycle.keepAlive,
            minorVersion: head.minorVersion,
            date: date.line,
            to: &connection.output
        )
        // Through a buffer pointer: `append(contentsOf:)` takes an array as its own, so the body was retained for it.
        if !bodyless { body.withUnsafeBufferPointer { connection.output.append(contentsOf: $0) } }
        server.logAccess(
            method: head.method,
            path: head.path,
            route: connection.route,
            status: status,
            bytes: bodyless ? 0 : body.count,
            start: requestStart,
            connection: connection.id
        )
    }

    /// The response is fully queued: keep the connection for the next request or start closing it.
    func finishResponse(_ connection: Connection) {
        connection.respondingTo = nil
        let action = connection.lifecycle.responseFinished(now: now, hasBufferedInput: connection.bufferedInput > 0)
        perform(action, on: connection)
    }

    /// Writes as much queued output as the socket takes; arms EPOLLOUT when it does not take everything. The
    /// lifecycle hears of progress, of a blocked socket (the write deadline) and of output that is all out.
    func flush(_ connection: Connection) {
        let fd = connection.fd
        guard Int(fd) < connections.count, connections[Int(fd)] === connection else { return }
        if connection.outputStart < connection.output.count {
            let start = connection.outputStart
            let sent = connection.output.withUnsafeBytes { bytes in
                send(UnsafeRawBufferPointer(rebasing: bytes[start...]), on: connection)
            }
            reportBytesSent()
            guard let sent else { return }
            connection.outputStart += sent
        }
        let pending = connection.output.count - connection.outputStart
        if pending == 0 {
            if connection.stream == nil {
                connection.output.removeAll(keepingCapacity: true)
            } else {
                // A stream's frames are sent from the shared frame, not from here: its output buffer goes (an idle
                // stream keeps none, and a fan-out's check for pending output reads no line of its own).
                connection.output = []
            }
            connection.outputStart = 0
            perform(connection.lifecycle.outputFlushed(), on: connection)
            guard connections[Int(fd)] === connection else { return }
        }
        updateInterest(connection, pending: pending)
        connection.stream?.update(appended: 0, buffered: pending)
    }

    /// Sends `bytes` to the connection until the socket takes no more; the number sent, or nil when the connection
    /// failed and was closed. What it sent waits in `unreportedBytesSent` for the caller's `reportBytesSent`.
    private func send(_ bytes: UnsafeRawBufferPointer, on connection: Connection) -> Int? {
        var sent = 0
        while sent < bytes.count {
            let n = Glibc.send(connection.fd, bytes.baseAddress! + sent, bytes.count - sent, Int32(MSG_NOSIGNAL))
            if n > 0 {
                sent += n
                unreportedBytesSent &+= n
                connection.lifecycle.outputSent(now: now)
            } else if n < 0, errno == EINTR {
                continue
            } else if n < 0, errno == EAGAIN || errno == EWOULDBLOCK {
                connection.lifecycle.outputBlocked(now: now)
                break
            } else {
                closeConnection(connection)
                return nil
            }
        }
        return sent
    }

    private func updateInterest(_ connection: Connection, pending: Int) {
        let wantWrite = pending > 0
        let wantRead = !connection.lifecycle.inputClosed && pending <= Self.outputBacklogLimit
        let current = (connection.writeInterest, !connection.readPaused)
        guard current != (wantWrite, wantRead) else { return }
        connection.writeInterest = wantWrite
        connection.readPaused = !wantRead
        let mask = (wantRead ? Self.readMask : 0) | (wantWrite ? EPOLLOUT.rawValue : 0)
        watch(connection.fd, events: mask, op: EPOLL_CTL_MOD)
    }

    /// EPOLLOUT: send more, then serve pipelined requests that waited for the client to catch up.
    func writable(_ connection: Connection) {
        flush(connection)
        guard connections[Int(connection.fd)] === connection, !connection.hasPendingOutput else { return }
        serve(connection)
    }

    /// One chunk for each of `streams` (hopped onto this queue): framed once and shared by every connection without
    /// a gzip encoder (which compresses its own). A connection with nothing queued is sent the shared frame itself,
    /// and only what its socket does not take is copied into its output; one that lags gets the frame queued behind
    /// what it holds. The bytes sent are counted once for the whole slice (a counter the shards share, not one
    /// increment a subscriber).
    func streamWrite(_ streams: some RandomAccessCollection<ResponseStream>, _ bytes: [UInt8]) {
        dispatchPrecondition(condition: .onQueue(queue))
        // Writers never queue nothing (and an empty chunk would end the body).
        guard !bytes.isEmpty else { return }
        now = DispatchTimeNow.nanoseconds()
        var chunk: [UInt8] = []
        let done: Void? = streams.withContiguousStorageIfAvailable { streams in
            for index in streams.indices {
                prefetch(after: index, in: streams)
                streamWrite(bytes, &chunk, to: streams[index])
            }
        }
        if done == nil {
            for stream in streams { streamWrite(bytes, &chunk, to: stream) }
        }
        reportBytesSent()
    }

    /// Adds the bytes sent since the last report to the shared counter.
    private func reportBytesSent() {
        guard unreportedBytesSent > 0 else { return }
        server.metrics.bytesSent(unreportedBytesSent)
        unreportedBytesSent = 0
    }

    /// While the kernel sends to the subscriber at `index`, the CPU fetches the stream two ahead and the connection
    /// one ahead (whose stream, fetched a step earlier, says which it is): `Prefetch`.
    private func prefetch(after index: Int, in streams: UnsafeBufferPointer<ResponseStream>) {
        Prefetch.object(at: index &+ 2, in: streams)
        guard index &+ 1 < streams.count else { return }
        let fd = Int(streams[index &+ 1].fd)
        // The fields a write touches (`Connection` declares them first) lie in its first four lines.
        connections.withUnsafeBufferPointer { Prefetch.object(at: fd, in: $0, lines: 4) }
    }

    /// One subscriber's write of a fan-out.
    private func streamWrite(_ bytes: [UInt8], _ chunk: inout [UInt8], to stream: ResponseStream) {
        guard let connection = liveConnection(stream), connection.stream === stream else {
            stream.update(appended: bytes.count, buffered: 0)
            return
        }
        if let encoder = connection.streamEncoder {
            appendStreamBytes(encoder.compress(bytes, flush: .sync), to: connection)
        } else {
            if connection.streamChunked, chunk.isEmpty { ResponseWriter.appendChunk(bytes, to: &chunk) }
            let frame = connection.streamChunked ? chunk : bytes
            if !connection.hasPendingOutput {
                guard let taken = frame.withUnsafeBytes({ send($0, on: connection) }) else {
                    stream.update(appended: bytes.count, buffered: 0)  // the connection failed and is closed
                    return
                }
                if taken == frame.count {
                    // All of it out, as nearly always: what `flush` would do next, without looking at the output
                    // again (nothing was pending, nothing is).
                    stream.update(appended: bytes.count, buffered: 0)
                    perform(connection.lifecycle.outputFlushed(), on: connection)
                    guard connections[Int(connection.fd)] === connection else { return }
                    updateInterest(connection, pending: 0)
                    return
                }
                // The rest waits in the output (which held nothing pending).
                connection.output.removeAll(keepingCapacity: true)
                connection.outputStart = 0
                connection.output.append(contentsOf: frame[taken...])
            } else {
                connection.output.append(contentsOf: frame)
            }
        }
        // The write's bytes left the stream's queue before the lifecycle hears the output is out (which may end
        // the connection).
        stream.update(appended: bytes.count, buffered: connection.output.count - connection.outputStart)
        flush(connection)
    }

    /// `finish()` from a `ResponseStream` (hopped onto this queue).
    func streamFinish(_ stream: ResponseStream) {
        dispatchPrecondition(condition: .onQueue(queue))
        guard let connection = liveConnection(stream), connection.stream === stream else { return }
        now = DispatchTimeNow.nanoseconds()
        endStreamBody(connection)
        connection.stream = nil
        stream.close(.clientGone)
        finishResponse(connection)
        serve(connection)
    }

    /// Graceful shutdown of a streaming response: tell the handler, end the body, close after flushing.
    func endStreamForShutdown(_ connection: Connection) {
        guard let stream = connection.stream else { return }
        connection.stream = nil
        stream.close(.serverShutdown)
        endStreamBody(connection)
        finishResponse(connection)
        flush(connection)
    }

    /// The gzip trailer (if compressing) and the last chunk (if chunked).
    private func endStreamBody(_ connection: Connection) {
        if let encoder = connection.streamEncoder {
            appendStreamBytes(encoder.compress([], flush: .finish), to: connection)
            connection.streamEncoder = nil
        }
        if connection.streamChunked { connection.output.append(contentsOf: ResponseWriter.lastChunk) }
    }

    private func appendStreamBytes(_ bytes: [UInt8], to connection: Connection) {
        guard !bytes.isEmpty else { return }
        if connection.streamChunked {
            ResponseWriter.appendChunk(bytes, to: &connection.output)
        } else {
            connection.output.append(contentsOf: bytes)
        }
    }

    /// Whether to gzip: the client prefers it and the handler did not encode the body itself.
    static func wantsGzip(_ head: some AnsweredRequest, _ response: Response) -> Bool {
        guard !response.headers.contains("Content-Encoding"), let accept = head.acceptEncoding else {
            return false
        }
        return AcceptEncoding.preferred(accept) == .gzip
    }

    private func liveConnection(_ stream: ResponseStream) -> Connection? {
        guard Int(stream.fd) < connections.count, let c = connections[Int(stream.fd)], c.id == stream.connectionID
        else {
            return nil
        }
        return c
    }
}

/// What an answer needs of the request it answers: its method (a HEAD answer has no body), its path (the access
/// line), its HTTP version and its `Accept-Encoding` (gzip).
protocol AnsweredRequest {
    var method: HTTPMethod { get }
    var path: String { get }
    var minorVersion: Int { get }
    var acceptEncoding: String? { get }
}

extension RequestHead: AnsweredRequest {
    var acceptEncoding: String? { headers["Accept-Encoding"] }
}

/// What a connection keeps of a request whose answer comes later (`Connection.respondingTo`): the four things its
/// answer reads, not a copy of the whole head, whose strings and fields went with the request (a copy counted a
/// reference to each of them, and the late answer then freed them).
struct LateRequest: AnsweredRequest {
    let method: HTTPMethod
    let path: String
    let minorVersion: Int
    let acceptEncoding: String?

    init(_ head: some AnsweredRequest) {
        method = head.method
        path = head.path
        minorVersion = head.minorVersion
        acceptEncoding = head.acceptEncoding
    }
}
