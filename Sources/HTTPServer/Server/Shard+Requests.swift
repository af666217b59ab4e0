import Dispatch
import Glibc

extension Shard {
    /// Reads what the socket has, then parses and answers as many buffered requests as the lifecycle allows.
    func readable(_ connection: Connection) {
        var eof = false
        // At most four buffers per event: level-triggered epoll brings a fast sender back, and others get a turn.
        for _ in 0..<4 {
            let n = recv(connection.fd, readBuffer.baseAddress, readBuffer.count, 0)
            if n > 0 {
                if connection.lifecycle.phase != .closing {
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
        if connection.lifecycle.phase == .closing {
            // Input is discarded; at EOF the connection closes once its answer is out (flush does that).
            if eof {
                connection.inputEOF = true
                if connection.hasPendingOutput { flush(connection) } else { closeConnection(connection) }
            }
            return
        }
        if !connection.lifecycle.acceptsRequests, connection.bufferedInput > server.maxBufferedInput {
            // Pipelined bytes pile up while a handler or a stream works: a client that floods is cut off.
            closeConnection(connection)
            return
        }
        if connection.bufferedInput > 0 { connection.lifecycle.bytesReceived(now: now) }
        if eof { connection.inputEOF = true }
        serve(connection)
    }

    /// Answers what buffered input allows, delivers EOF once nothing buffered can progress, and flushes; again
    /// while flushing frees the way for requests that waited on a client reading slowly.
    func serve(_ connection: Connection) {
        let fd = Int(connection.fd)
        while true {
            let before = connection.bufferedInput
            process(connection)
            guard connections[fd] === connection else { return }
            let blocked =
                connection.bufferedInput > 0 && connection.lifecycle.acceptsRequests
                && connection.output.count - connection.outputStart > Self.outputBacklogLimit
            if connection.inputEOF, !blocked, connection.lifecycle.inputEnded(now: now) == .close {
                closeConnection(connection)
                return
            }
            flush(connection)
            guard connections[fd] === connection else { return }
            let progressed = connection.bufferedInput < before
            guard progressed, connection.bufferedInput > 0, connection.lifecycle.acceptsRequests,
                !connection.hasPendingOutput
            else { return }
        }
    }

    /// Parses and answers buffered requests in order until one must wait (async handler, stream, more bytes).
    func process(_ connection: Connection) {
        do throws(HTTPServerError) {
            while connection.lifecycle.acceptsRequests, connection.bufferedInput > 0,
                connection.output.count - connection.outputStart <= Self.outputBacklogLimit
            {
                if connection.pendingBody != nil {
                    guard try continueBody(connection) else { break }
                    continue
                }
                let result = try connection.input.withUnsafeBufferPointer { (all) throws(HTTPServerError) in
                    try connection.parser.parseHead(UnsafeBufferPointer(rebasing: all[connection.inputStart...]))
                }
                guard case .head(let head, let consumed) = result else { break }
                connection.inputStart += consumed
                try begin(head, on: connection)
            }
        } catch {
            fail(connection, error)
        }
        connection.compactInput()
    }

    /// A head arrived: route it, check its body against the route's limit, answer or start reading the body.
    private func begin(_ head: RequestHead, on connection: Connection) throws(HTTPServerError) {
        connection.requestStart = now
        let hasBody = head.framing != .none
        connection.lifecycle.headParsed(now: now, hasBody: hasBody, keepAlive: head.keepAlive)
        var route: Router.Route?
        var parameters: [String: String] = [:]
        var early: Response?
        switch server.router.match(head.method, head.path) {
        case .found(let r, let p):
            route = r
            parameters = p
        case .methodNotAllowed(let allow):
            var response = Response.problem(status: 405, detail: "The resource does not take \(head.method.rawValue).")
            response.headers.add(name: "Allow", value: allow.map(\.rawValue).joined(separator: ", "))
            early = response
        case .notFound:
            early = Response.problem(status: 404, detail: "No resource at \(head.path).")
        }
        let limit = route?.maxBodySize ?? server.configuration.maxDrainBytes
        if case .length(let n) = head.framing, n > limit {
            if route == nil, let early {
                // The answer is known; the body is too large to drain: answer, then close with lingering so the
                // body still arriving does not reset the connection before the client reads the answer.
                connection.lifecycle.headParsed(now: now, hasBody: false, keepAlive: false)
                respond(early, to: head, on: connection, finished: false)
                _ = connection.lifecycle.requestFailed(now: now)
                return
            }
            throw HTTPServerError(.contentTooLarge, "The body is larger than \(limit) bytes.")
        }
        if !hasBody {
            if let route {
                dispatch(Request(head: head, pathParameters: parameters), route: route, on: connection)
            } else if let early {
                respond(early, to: head, on: connection)
            }
            return
        }
        if let early {
            // Answer now, then read the body only to throw it away (or close if it is too large).
            respond(early, to: head, on: connection, finished: false)
        } else if head.expectsContinue, connection.bufferedInput == 0 {
            connection.output.append(contentsOf: ResponseWriter.continueLine)
        }
        connection.pendingBody = Connection.PendingBody(
            head: head,
            route: route,
            parameters: parameters,
            decoder: BodyDecoder(framing: head.framing, limit: limit, trailerLimits: server.configuration.limits),
            body: [],
            discard: early != nil
        )
    }

    /// Feeds buffered bytes to the body decoder; true when the body completed.
    private func continueBody(_ connection: Connection) throws(HTTPServerError) -> Bool {
        guard var pending = connection.pendingBody else { return false }
        connection.pendingBody = nil
        let progress: BodyDecoder.Progress
        do throws(HTTPServerError) {
            progress = try connection.input.withUnsafeBufferPointer { (all) throws(HTTPServerError) in
                try pending.decoder.decode(
                    UnsafeBufferPointer(rebasing: all[connection.inputStart...]),
                    into: &pending.body
                )
            }
        } catch {
            if pending.discard {
                // The answer went out already; a body we cannot drain ends the connection.
                _ = connection.lifecycle.requestFailed(now: now)
                connection.input.removeAll()
                connection.inputStart = 0
                return false
            }
            throw error
        }
        connection.inputStart += progress.consumed
        if pending.discard { pending.body.removeAll(keepingCapacity: true) }
        guard progress.isComplete else {
            connection.pendingBody = pending
            return false
        }
        connection.lifecycle.bodyCompleted()
        if pending.discard {
            finishResponse(connection)
        } else if let route = pending.route {
            let request = Request(
                head: pending.head,
                body: pending.body,
                trailers: pending.decoder.trailers,
                pathParameters: pending.parameters
            )
            dispatch(request, route: route, on: connection)
        }
        return true
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
            connection.respondingTo = request.head
            let deliver = lateDelivery(for: request.head, on: connection)
            Task {
                let response: Response
                do {
                    response = try await handler(request)
                } catch {
                    response = Self.errorResponse(error)
                }
                deliver(response)
            }
        case .deferred(let handler):
            let responder = Responder()
            handler(request, responder)
            if let response = responder.handlerReturned(deliver: lateDelivery(for: request.head, on: connection)) {
                respond(response, to: request.head, on: connection)
            } else {
                connection.respondingTo = request.head
            }
        }
    }

    /// Writes a response that comes after the handler returned: hops to this shard, and answers only if the
    /// connection is still the one that asked.
    private func lateDelivery(
        for head: RequestHead,
        on connection: Connection
    ) -> @Sendable (Response) -> Void {
        let fd = connection.fd
        let id = connection.id
        return { [self] response in
            queue.async { [self] in
                self.now = DispatchTimeNow.nanoseconds()
                guard Int(fd) < connections.count, let connection = connections[Int(fd)], connection.id == id else {
                    return
                }
                respond(response, to: head, on: connection)
                serve(connection)
            }
        }
    }

    static func errorResponse(_ error: any Error) -> Response {
        if let error = error as? HTTPServerError { return .problem(error) }
        return .problem(status: 500, detail: "The handler failed.")
    }

    /// A request could not be parsed or exceeded a limit: answer with its status and close.
    func fail(_ connection: Connection, _ error: HTTPServerError) {
        connection.pendingBody = nil
        connection.input.removeAll()
        connection.inputStart = 0
        _ = connection.lifecycle.requestFailed(now: now)
        let response = Response.problem(error)
        var out = connection.output
        connection.output = []
        ResponseWriter.appendHead(
            status: response.status,
            headers: response.headers,
            contentLength: Self.byteCount(response.body),
            chunked: false,
            keepAlive: false,
            minorVersion: 1,
            date: date.line,
            to: &out
        )
        if case .bytes(let body) = response.body { out.append(contentsOf: body) }
        connection.output = out
        server.metrics.record(status: response.status, since: connection.requestStart, now: now)
        connection.requestStart = 0  // timed once; a later failure on this connection has no start
        server.logAccess(method: nil, path: nil, status: response.status, connection: connection.id)
    }

    static func byteCount(_ body: Response.Body) -> Int? {
        if case .bytes(let b) = body { return b.count }
        return nil
    }
}

enum DispatchTimeNow {
    static func nanoseconds() -> UInt64 { DispatchTime.now().uptimeNanoseconds }
}
