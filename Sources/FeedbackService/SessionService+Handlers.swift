import CoreMetrics
import FeedbackJSON
import HTTPServer
import SessionStreams

extension SessionService {
    func listSystems() -> Response {
        let list = systemOrder.compactMap { systems[$0]?.description }
        return Response.json(JSONValue.object(["systems": .array(list)]).serialized())
    }

    /// `POST /v1/sessions`: a new session under a random id; the answer and the session whose journaling it waits for.
    func createSession(_ request: Request) throws(APIError) -> (Response, any HostedSession) {
        try startSession(request, id: SessionID.random(), chosenByClient: false)
    }

    /// `PUT /v1/sessions/{id}`: a new session under an id the client chose, so that a balancer hashing the path
    /// sends the creation to the replica that will own the session. Repeating the same PUT is safe: it answers
    /// 200 with the session as it is now. Another system, or a starting state, for an existing id is 409.
    func putSession(_ request: Request) throws(APIError) -> (Response, any HostedSession) {
        let text = request.parameter("id") ?? ""
        guard let id = SessionID(text) else {
            throw APIError(
                .invalidRequest,
                "\"\(text)\" is not a session id: choose 16 random bytes and write them as 22 base64url characters "
                    + "without padding (e.g. 3q2-7wAAAAAAAAAAAAAAAA)"
            )
        }
        return try startSession(request, id: id, chosenByClient: true)
    }

    private func startSession(
        _ request: Request,
        id: SessionID,
        chosenByClient: Bool
    ) throws(APIError) -> (Response, any HostedSession) {
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
        if chosenByClient, let existing = try activeSession(id) {
            return try existingSession(existing, system: name, startingState: members["state"] != nil)
        }
        if let refusal = persistence?.writeRefusal() { throw refusal }
        guard !isDraining else {
            throw APIError(
                .draining,
                "the server is shutting down; retry, and another replica will answer",
                retryAfter: 1
            )
        }
        let epoch = UInt64.random(in: 1...UInt64(UInt32.max))
        makeRoom()
        let insertion = try store.insert(id: id) { () throws(APIError) in
            try system.startSession(
                id: id,
                epoch: epoch,
                state: members["state"],
                inboxCapacity: configuration.inboxCapacity,
                environment: environment(id),
                persistence: persistence
            )
        }
        let session: any HostedSession
        switch insertion {
        case .inserted(let inserted):
            session = inserted
        case .existing(let existing):
            // Two PUTs for one id raced; the other one created it.
            return try existingSession(existing, system: name, startingState: members["state"] != nil)
        }
        metrics.sessionsCreated.increment()
        metrics.sessions.increment()
        let snapshot = session.snapshot()
        var response = Response.json(snapshot.body(id: id, system: name), status: 201)
        response.headers.add(name: "Location", value: "/v1/sessions/\(id)")
        response.headers.add(name: "ETag", value: snapshot.cursor.entityTag)
        return (response, session)
    }

    /// The answer to a PUT for an id that is taken: the session itself when the PUT repeats its creation.
    private func existingSession(
        _ session: any HostedSession,
        system: String,
        startingState: Bool
    ) throws(APIError) -> (Response, any HostedSession) {
        if let fenced = persistence?.fenceProblem(session.id) { throw fenced }
        guard session.systemName == system, !startingState else {
            throw APIError(
                .sessionExists,
                "session \(session.id) already exists (system \(session.systemName)); "
                    + "choose another id, or GET it to continue with it"
            )
        }
        let snapshot = session.snapshot()
        var response = Response.json(snapshot.body(id: session.id, system: system))
        response.headers.add(name: "Location", value: "/v1/sessions/\(session.id)")
        response.headers.add(name: "ETag", value: snapshot.cursor.entityTag)
        return (response, session)
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
        if let fenced = persistence?.fenceProblem(id) { throw fenced }
        // A removal the journal cannot write would bring the session back at the next start.
        if let refusal = persistence?.writeRefusal() { throw refusal }
        // A passive session is brought back first, so that its loop's end and its removal are journaled as usual.
        guard let session = try activeSession(id).flatMap({ store.remove($0.id) }) else {
            if persistence?.discardBroken(id) == true { return Response(status: 204) }
            throw Self.notFound(id)
        }
        session.stop()
        streams.end(id, reason: .deleted)
        persistence?.removed(id)
        metrics.sessions.decrement()
        metrics.sessionsEnded.increment()
        return Response(status: 204)
    }

    /// `POST /v1/sessions/{id}/events`: answers through `completion` once the reducer applied the events (on the
    /// thread that reduced them, often this one before it returns), or at once with the refusal.
    func postEvents(_ request: Request, completion: @escaping @Sendable (Result<SessionSnapshot, APIError>) -> Void) {
        let session: any HostedSession
        let events: [JSONValue]
        do throws(APIError) {
            session = try self.session(for: request)
            events = try Self.events(in: Self.jsonBody(request), limit: configuration.maxEventsPerBatch)
            if let refusal = persistence?.writeRefusal() { throw refusal }
        } catch {
            return completion(.failure(error))
        }
        let ifMatch = request.headers["if-match"]
        let count = events.count
        // One closure per post, holding only the counter it needs (not the whole `ServiceMetrics`).
        let eventsApplied = metrics.eventsApplied
        let applied: @Sendable (Result<SessionSnapshot, APIError>) -> Void = { result in
            if case .success = result { eventsApplied.increment(by: count) }
            Self.answerOnceJournaled(result, of: session, completion)
        }
        guard let key = request.headers["idempotency-key"] else {
            return session.post(events, ifMatch: ifMatch, claim: nil, completion: applied)
        }
        guard !key.isEmpty, key.utf8.count <= 255, key.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F }) else {
            return completion(
                .failure(APIError(.invalidRequest, "Idempotency-Key is 1 to 255 visible ASCII characters, e.g. a UUID"))
            )
        }
        // At most once per key: a retry with the same body gets the first answer (which wins over If-Match: the
        // retry of an applied request must not fail), another body is 422, a retry while the first is still
        // running is 409. A request that fails applies nothing, so its key is forgotten and may be used again.
        let claim = IdempotencyClaim(key: key, fingerprint: fingerprints.hash(request.body))
        switch session.withIdempotencyLedger({ $0.begin(key: key, fingerprint: claim.fingerprint) }) {
        case .replay(let snapshot):
            Self.answerOnceJournaled(.success(snapshot), of: session, completion)
        case .inFlight:
            completion(
                .failure(
                    APIError(
                        .idempotencyInFlight,
                        "a request with Idempotency-Key \(key) is still being applied; retry when it has been answered",
                        retryAfter: 1
                    )
                )
            )
        case .mismatch:
            completion(
                .failure(
                    APIError(
                        .idempotencyMismatch,
                        "Idempotency-Key \(key) was used with another body; use a new key for a new request"
                    )
                )
            )
        case .proceed:
            session.post(events, ifMatch: ifMatch, claim: claim) { result in
                session.withIdempotencyLedger { ledger in
                    switch result {
                    case .success(let snapshot): ledger.complete(key: key, answer: snapshot)
                    case .failure: ledger.abandon(key: key)
                    }
                }
                applied(result)
            }
        }
    }

    /// Answers a post once the session's records up to its events (and any an effect sent before them) are durable;
    /// a replayed answer waits too, since its first request may still be waiting. A failure is answered at once.
    private static func answerOnceJournaled(
        _ result: Result<SessionSnapshot, APIError>,
        of session: any HostedSession,
        _ completion: @escaping @Sendable (Result<SessionSnapshot, APIError>) -> Void
    ) {
        guard case .success = result else { return completion(result) }
        session.whenJournaled { problem in completion(problem.map { .failure($0) } ?? result) }
    }

    /// The events of a POST body: one event object, or `{"events": [...]}` with 1 to `limit` of them.
    static func events(in body: JSONValue, limit: Int) throws(APIError) -> [JSONValue] {
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
        guard events.count <= limit else {
            throw APIError(.invalidEvent, "a batch holds at most \(limit) events; this one has \(events.count)")
        }
        return events
    }

    // MARK: - Request parts

    func sessionID(_ request: Request) throws(APIError) -> SessionID {
        let text = request.parameter("id") ?? ""
        guard let id = SessionID(text) else {
            throw APIError(.sessionNotFound, "no session has the id \"\(text)\"; ids are 22 base64url characters")
        }
        return id
    }

    func session(for request: Request) throws(APIError) -> any HostedSession {
        let id = try sessionID(request)
        // A copy another replica took over was dropped before the handler ran (`confirmingOwnership`): a read from
        // it would answer an older revision. A post needs no such look: the fence refuses a superseded copy's append.
        guard let session = try activeSession(id) else { throw persistence?.brokenProblem(id) ?? Self.notFound(id) }
        if let fenced = persistence?.fenceProblem(id) { throw fenced }
        return session
    }

    static func notFound(_ id: SessionID) -> APIError {
        APIError(.sessionNotFound, "no session \(id): it never existed, was deleted, or expired")
    }

    /// The body as JSON: 415 unless the content type is JSON, 400 with the parser's words when it is malformed.
    static func jsonBody(_ request: Request) throws(APIError) -> JSONValue {
        let type = request.headers["content-type"] ?? ""
        guard Self.isJSONMediaType(type) else {
            throw APIError(
                .unsupportedMediaType,
                "the body must be JSON with Content-Type: application/json; got \(type.isEmpty ? "none" : type)"
            )
        }
        do {
            return try JSONValue(parsing: request.body)
        } catch {
            let detail = request.body.isEmpty ? "the body is empty" : error.description
            throw APIError(.malformedJSON, "the body is not valid JSON: \(detail)")
        }
    }

    /// Whether a `Content-Type` value names JSON (`application/json` or `application/*+json`, any case, any
    /// parameters): compared as bytes, since it runs for every posted body.
    static func isJSONMediaType(_ value: String) -> Bool {
        var value = value
        return value.withUTF8 { bytes in
            let isSpace = { (byte: UInt8) in byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") }
            let lower = { (byte: UInt8) in byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z") ? byte + 32 : byte }
            let matches = { (offset: Int, text: StaticString) -> Bool in
                (0..<text.utf8CodeUnitCount).allSatisfy { lower(bytes[offset + $0]) == text.utf8Start[$0] }
            }
            var start = 0
            var end = bytes.firstIndex(of: UInt8(ascii: ";")) ?? bytes.count
            while start < end && isSpace(bytes[start]) { start += 1 }
            while end > start && isSpace(bytes[end - 1]) { end -= 1 }
            let length = end - start
            guard length > 12, matches(start, "application/") else { return false }
            return length == 16 && matches(end - 4, "json") || length > 17 && matches(end - 5, "+json")
        }
    }
}
