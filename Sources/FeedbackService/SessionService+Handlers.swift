import HTTPServer

extension SessionService {
    func listSystems() -> Response {
        let list = systemOrder.compactMap { systems[$0]?.description }
        return Response.json(JSONValue.object(["systems": .array(list)]).serialized())
    }

    func createSession(_ request: Request) throws(APIError) -> Response {
        let body = try Self.jsonBody(request)
        guard case .object(let members) = body else {
            throw APIError(.invalidRequest, "the body is a JSON object like {\"system\": \"counter\"}")
        }
        guard case .string(let name)? = members["system"] else {
            throw APIError(
                .invalidRequest,
                "\"system\" (a string) is required; available: \(systemOrder.joined(separator: ", "))"
            )
        }
        guard let system = systems[name] else {
            throw APIError(
                .systemNotFound,
                "there is no system \"\(name)\"; available: \(systemOrder.joined(separator: ", "))"
            )
        }
        guard !isDraining else {
            throw APIError(
                .draining,
                "the server is shutting down; retry, and another replica will answer",
                retryAfter: 1
            )
        }
        let id = SessionID.random()
        let epoch = UInt64.random(in: 1...UInt64(UInt32.max))
        let session = try store.insert { () throws(APIError) in
            try system.startSession(
                id: id,
                epoch: epoch,
                state: members["state"],
                inboxCapacity: configuration.inboxCapacity,
                environment: environment(id),
                persistence: persistence
            )
        }
        metrics.sessionsCreated.increment()
        metrics.sessions.increment()
        let snapshot = session.snapshot()
        var response = Response.json(snapshot.body(id: id, system: name), status: 201)
        response.headers.add(name: "Location", value: "/v1/sessions/\(id)")
        response.headers.add(name: "ETag", value: snapshot.cursor.entityTag)
        return response
    }

    func getSession(_ request: Request) throws(APIError) -> Response {
        let session = try session(for: request)
        let snapshot = session.snapshot()
        if let tags = request.headers["if-none-match"], snapshot.cursor.matches(entityTags: tags) {
            return Response(status: 304, headers: HTTPHeaders([("ETag", snapshot.cursor.entityTag)]))
        }
        var response = Response.json(snapshot.body(id: session.id, system: session.systemName))
        response.headers.add(name: "ETag", value: snapshot.cursor.entityTag)
        response.headers.add(name: "Cache-Control", value: "no-cache")
        return response
    }

    func deleteSession(_ request: Request) throws(APIError) -> Response {
        let id = try sessionID(request)
        guard let session = store.remove(id) else {
            if persistence?.discardBroken(id) == true { return Response(status: 204) }
            throw Self.notFound(id)
        }
        session.stop()
        persistence?.removed(id)
        metrics.sessions.decrement()
        metrics.sessionsEnded.increment()
        return Response(status: 204)
    }

    func postEvents(_ request: Request) async throws(APIError) -> Response {
        let session = try session(for: request)
        let body = try Self.jsonBody(request)
        let events: [JSONValue]
        if case .object(let members) = body, members["type"] == nil, case .array(let list)? = members["events"] {
            events = list
        } else if case .object = body {
            events = [body]
        } else {
            throw APIError(.invalidEvent, "send one event {\"type\": …} or a batch {\"events\": [{\"type\": …}, …]}")
        }
        guard !events.isEmpty else {
            throw APIError(.invalidEvent, "the batch is empty; send at least one event")
        }
        guard events.count <= configuration.maxEventsPerBatch else {
            throw APIError(
                .invalidEvent,
                "a batch holds at most \(configuration.maxEventsPerBatch) events; this one has \(events.count)"
            )
        }
        let snapshot = try await Self.once(session, key: request.headers["idempotency-key"], body: request.body) {
            () async throws(APIError) in
            // A replayed answer wins over If-Match: the retry of an applied request must not fail.
            if let tags = request.headers["if-match"], case let current = session.snapshot().cursor,
                !current.matches(entityTags: tags)
            {
                throw APIError(
                    .preconditionFailed,
                    "If-Match \(tags) is not the session's current cursor \(current.entityTag); "
                        + "GET the session and retry with its ETag"
                )
            }
            let snapshot = try await session.post(events)
            // The answer waits until the events (and any an effect sent before them) are durable.
            try await persistence?.durable()
            metrics.eventsApplied.increment(by: events.count)
            return snapshot
        }
        var response = Response.json(snapshot.body())
        response.headers.add(name: "ETag", value: snapshot.cursor.entityTag)
        return response
    }

    /// Runs `apply` at most once per `Idempotency-Key`: a retry with the same body gets the first answer, another
    /// body is 422, a retry while the first is still running is 409. A request that fails applies nothing, so its
    /// key is forgotten and may be used again.
    static func once(
        _ session: any HostedSession,
        key: String?,
        body: [UInt8],
        _ apply: () async throws(APIError) -> SessionSnapshot
    ) async throws(APIError) -> SessionSnapshot {
        guard let key else { return try await apply() }
        guard !key.isEmpty, key.utf8.count <= 255, key.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F }) else {
            throw APIError(.invalidRequest, "Idempotency-Key is 1 to 255 visible ASCII characters, e.g. a UUID")
        }
        switch session.withIdempotencyLedger({ $0.begin(key: key, body: body) }) {
        case .replay(let snapshot):
            return snapshot
        case .inFlight:
            throw APIError(
                .idempotencyInFlight,
                "a request with Idempotency-Key \(key) is still being applied; retry when it has been answered",
                retryAfter: 1
            )
        case .mismatch:
            throw APIError(
                .idempotencyMismatch,
                "Idempotency-Key \(key) was used with another body; use a new key for a new request"
            )
        case .proceed:
            do {
                let snapshot = try await apply()
                session.withIdempotencyLedger { $0.complete(key: key, answer: snapshot) }
                return snapshot
            } catch {
                session.withIdempotencyLedger { $0.abandon(key: key) }
                throw error
            }
        }
    }

    // MARK: - Request parts

    private func sessionID(_ request: Request) throws(APIError) -> SessionID {
        let text = request.parameter("id") ?? ""
        guard let id = SessionID(text) else {
            throw APIError(.sessionNotFound, "no session has the id \"\(text)\"; ids are 22 base64url characters")
        }
        return id
    }

    private func session(for request: Request) throws(APIError) -> any HostedSession {
        let id = try sessionID(request)
        guard let session = store[id] else { throw persistence?.brokenProblem(id) ?? Self.notFound(id) }
        return session
    }

    static func notFound(_ id: SessionID) -> APIError {
        APIError(.sessionNotFound, "no session \(id): it never existed, was deleted, or expired")
    }

    /// The body as JSON: 415 unless the content type is JSON, 400 with the parser's words when it is malformed.
    static func jsonBody(_ request: Request) throws(APIError) -> JSONValue {
        let type = request.headers["content-type"] ?? ""
        let mediaType = type.split(separator: ";").first.map { $0.trimmingSpaces().lowercased() } ?? ""
        guard mediaType == "application/json" || (mediaType.hasPrefix("application/") && mediaType.hasSuffix("+json"))
        else {
            throw APIError(
                .unsupportedMediaType,
                "the body must be JSON with Content-Type: application/json; got \(type.isEmpty ? "none" : type)"
            )
        }
        do {
            return try JSONValue(parsing: request.body)
        } catch {
            let detail = request.body.isEmpty ? "the body is empty" : SystemEvents.syntaxError(in: request.body)
            throw APIError(.malformedJSON, "the body is not valid JSON: \(detail)")
        }
    }
}
