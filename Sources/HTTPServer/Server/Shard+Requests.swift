import CEpoll
import Dispatch
import Glibc

extension Shard {
    /// Reads what the socket has, then decodes and answers as many buffered requests as the lifecycle allows.
    func readable(_ connection: Connection) {
        var eof = false
        var received = 0
        // At most four buffers per event: level-triggered epoll brings a fast sender back, and others get a turn.
        for _ in 0..<4 {
            let n = recv(connection.fd, readBuffer.baseAddress, readBuffer.count, 0)
            if n > 0 {
                received += n
                if !connection.lifecycle.discardsInput {
                    connection.input.append(contentsOf: UnsafeRawBufferPointer(start: readBuffer.baseAddress, count: n))
                }
                if n < readBuffer.count { break }
            } else if n == 0 {
                eof = true
                break
            } else {
                if errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR { break }
                closeConnection(connection)
                return
            }
        }
        if connection.lifecycle.discardsInput {
            if eof { perform(connection.lifecycle.inputEnded(), on: connection) }
            return
        }
        if !connection.lifecycle.acceptsRequests, connection.bufferedInput > server.maxBufferedInput {
            // Pipelined bytes pile up while a handler or a stream works: a client that floods is cut off.
            closeConnection(connection)
            return
        }
        if connection.bufferedInput > 0 { connection.lifecycle.bytesReceived(received, now: now) }
        if eof { perform(connection.lifecycle.inputEnded(), on: connection) }
        serve(connection)
    }

    /// Answers what buffered input allows, tells the lifecycle (which ends the connection after EOF once nothing
    /// buffered can progress), and flushes; again while flushing frees the way for requests that waited on a client
    /// reading slowly.
    func serve(_ connection: Connection) {
        let fd = Int(connection.fd)
        while true {
            let before = connection.bufferedInput
            process(connection)
            guard connections[fd] === connection else { return }
            let blocked =
                connection.bufferedInput > 0 && connection.lifecycle.acceptsRequests
                && connection.output.count - connection.outputStart > Self.outputBacklogLimit
            perform(connection.lifecycle.served(now: now, blocked: blocked), on: connection)
            guard connections[fd] === connection else { return }
            flush(connection)
            guard connections[fd] === connection else { return }
            let progressed = connection.bufferedInput < before
            guard progressed, connection.bufferedInput > 0, connection.lifecycle.acceptsRequests,
                !connection.hasPendingOutput
            else { return }
        }
    }

    /// Feeds buffered input to the connection's `RequestDecoder` and performs what it finds, in order, until a
    /// request must wait (async handler, stream, more bytes, a client that does not read).
    func process(_ connection: Connection) {
        do throws(HTTPServerError) {
            while connection.lifecycle.acceptsRequests,
                connection.output.count - connection.outputStart <= Self.outputBacklogLimit
            {
                // The input read in place (a mutable access of the connection's own buffer): a plain read of a class's
                // array retained it for the call and released it after, twice a request.
                let step = try connection.input.withUnsafeMutableBufferPointer { (all) throws(HTTPServerError) in
                    try connection.decoder.decode(UnsafeBufferPointer(rebasing: all[connection.inputStart...]))
                }
                let start = connection.inputStart
                connection.inputStart += step.consumed
                switch step.part {
                case nil:
                    connection.compactInput()
                    return
                case .head(let head):
                    try begin(head, on: connection)
                case .body(let range):
                    connection.pendingBody?.request.body.append(
                        contentsOf: connection.input[(start + range.lowerBound)..<(start + range.upperBound)]
                    )
                case .end(let trailers):
                    complete(connection, trailers: trailers)
                }
            }
        } catch {
            if let pending = connection.pendingBody, pending.route == nil {
                // The answer went out already; a body we cannot discard ends the connection.
                connection.pendingBody = nil
                connection.input.removeAll()
                connection.inputStart = 0
                perform(connection.lifecycle.requestFailed(now: now), on: connection)
            } else {
                fail(connection, error)
            }
        }
        connection.compactInput()
    }

    /// A head arrived: route it, tell the decoder the route's body limit (or to discard the body of an early
    /// answer), answer now or wait for the body.
    private func begin(_ head: consuming RequestHead, on connection: Connection) throws(HTTPServerError) {
        connection.requestStart = now
        let hasBody = head.framing != .none
        connection.lifecycle.headParsed(
            now: now,
            hasBody: hasBody,
            keepAlive: head.keepAlive,
            bufferedBytes: connection.bufferedInput
        )
        var early: Response
        connection.route = nil
        switch server.router.match(head.method, head.path) {
        case .found(let route, let parameters):
            connection.route = route
            guard hasBody else {
                dispatch(Request(head: head, pathParameters: parameters), route: route, on: connection)
                return
            }
            // A body of a declared length that arrived with its head (a post's usually does): the request gets it
            // now and goes to its route, where it would otherwise wait in `pendingBody` for two more decode steps.
            if let length = connection.decoder.takeWholeBody(
                limit: route.maxBodySize,
                available: connection.bufferedInput
            ) {
                let start = connection.inputStart
                connection.inputStart += length
                connection.lifecycle.bodyCompleted()
                // Grown by the append (`Array(slice)` took an unspecialised path), from the input read in place (a slice
                // of it retained the buffer).
                var body: [UInt8] = []
                connection.input.withUnsafeMutableBufferPointer { input in
                    body.append(contentsOf: UnsafeBufferPointer(rebasing: input[start..<(start + length)]))
                }
                dispatch(Request(head: head, body: body, pathParameters: parameters), route: route, on: connection)
                return
            }
            if try connection.decoder.readBody(limit: route.maxBodySize), connection.bufferedInput == 0 {
                connection.output.append(contentsOf: ResponseWriter.continueLine)
            }
            connection.pendingBody = Connection.PendingBody(
                request: Request(head: head, pathParameters: parameters),
                route: route
            )
            return
        case .methodNotAllowed(let allow):
            early = Response.problem(status: 405, detail: "The resource does not take \(head.method.rawValue).")
            early.headers.add(name: "Allow", value: allow.map(\.rawValue).joined(separator: ", "))
        case .notFound:
            early = Response.problem(status: 404, detail: "No resource at \(head.path).")
        }
        guard hasBody else {
            respond(early, to: head, on: connection)
            return
        }
        do throws(HTTPServerError) {
            try connection.decoder.discardBody(limit: server.configuration.maxDiscardBytes)
        } catch {
            // The body is too large to discard: answer, then close with lingering so the body still arriving does
            // not reset the connection before the client reads the answer.
            connection.lifecycle.disableKeepAlive()
            respond(early, to: head, on: connection, finished: false)
            perform(connection.lifecycle.requestFailed(now: now), on: connection)
            return
        }
        respond(early, to: head, on: connection, finished: false)
        connection.pendingBody = Connection.PendingBody(request: Request(head: head), route: nil)
    }

    /// A body ended: hand the request to its route, or finish the early answer whose body was discarded.
    private func complete(_ connection: Connection, trailers: HTTPHeaders) {
        guard var pending = connection.pendingBody.take() else { return }  // moved out, not copied
        connection.lifecycle.bodyCompleted()
        guard let route = pending.route else {
            finishResponse(connection)
            return
        }
        pending.request.trailers = trailers
        dispatch(pending.request, route: route, on: connection)
    }

    /// Runs the route's handler: inline for sync handlers, in a Task for async ones.
    private func dispatch(_ request: Request, route: Router.Route, on connection: Connection) {
        switch route.handler {
        case .sync(let handler):
            let response: Response
            do {
                response = try handler(request)
            } catch {
                response = Self.errorResponse(error)
            }
            respond(response, to: request.head, on: connection)
        case .async(let handler):
            connection.respondingTo = LateRequest(request.head)
            let deliver = LateDelivery(shard: self, connection: connection)
            Task {
                let response: Response
                do {
                    response = try await handler(request)
                } catch {
                    response = Self.errorResponse(error)
                }
                deliver.deliver(response)
            }
        case .deferred(let handler):
            let responder = Responder()
            handler(request, responder)
            if let response = responder.handlerReturned(deliver: LateDelivery(shard: self, connection: connection)) {
                respond(response, to: request.head, on: connection)
            } else {
                connection.respondingTo = LateRequest(request.head)
            }
        }
    }

    static func errorResponse(_ error: any Error) -> Response {
        if let error = error as? HTTPServerError { return .problem(error) }
        return .problem(status: 500, detail: "The handler failed.")
    }

    /// A request could not be decoded or exceeded a limit: answer with its status and close.
    func fail(_ connection: Connection, _ error: HTTPServerError) {
        queueFailure(error, on: connection)
        perform(connection.lifecycle.requestFailed(now: now), on: connection)
    }

    /// The body of the request being read came too slowly (the lifecycle is closing already): answer 408 unless the
    /// request was answered before its body (404/405), then send.
    func timeOut(_ connection: Connection) {
        if let pending = connection.pendingBody, pending.route != nil {
            queueFailure(HTTPServerError(.requestTimeout, Self.slowBodyDetail), on: connection)
        }
        connection.pendingBody = nil
        connection.input.removeAll()
        connection.inputStart = 0
        flush(connection)
    }

    static let slowBodyDetail = "The request body did not arrive in time; send it faster, or all at once."

    /// Queues the problem answer to a request that failed; the connection will not be kept alive.
    private func queueFailure(_ error: HTTPServerError, on connection: Connection) {
        connection.pendingBody = nil
        connection.input.removeAll()
        connection.inputStart = 0
        let response = Response.problem(error)
        ResponseWriter.appendHead(
            status: response.status,
            headers: response.headers,
            contentLength: Self.byteCount(response.body),
            chunked: false,
            keepAlive: false,
            minorVersion: 1,
            date: date.line,
            to: &connection.output
        )
        if case .bytes(let body) = response.body { connection.output.append(contentsOf: body) }
        let start = connection.requestStart
        server.metrics.record(status: response.status, since: start, now: now)
        connection.requestStart = 0  // timed once; a later failure on this connection has no start
        server.logAccess(
            method: nil,
            path: nil,
            route: nil,
            status: response.status,
            bytes: Self.byteCount(response.body),
            start: start,
            connection: connection.id
        )
    }

    /// Performs what the connection's lifecycle machine decided; every action has its effect here.
    func perform(_ action: ConnectionLifecycle.Action, on connection: Connection) {
        switch action {
        case .none:
            return
        case .close(let reason):
            closeConnection(connection, reason: reason)
        case .closeAfterFlush:
            flush(connection)
        case .shutdownWrite:
            shutdown(connection.fd, Int32(SHUT_WR))
        case .endStream:
            endStreamForShutdown(connection)
        case .timeOut:
            timeOut(connection)
        }
    }

    static func byteCount(_ body: Response.Body) -> Int? {
        if case .bytes(let b) = body { return b.count }
        return nil
    }
}

enum DispatchTimeNow {
    static func nanoseconds() -> UInt64 { DispatchTime.now().uptimeNanoseconds }
}
