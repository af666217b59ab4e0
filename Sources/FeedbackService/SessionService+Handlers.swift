import CoreMetrics
import FeedbackJSON
import HTTPServer
import SessionRuntime
import SessionStreams

extension SessionService {
    func listSystems() -> Response {
        let list = host.systemOrder.compactMap { host.systems[$0]?.description }
        return Response.json(JSONValue.object(["systems": .array(list)]).serialized())
    }

    /// `GET /v1/systems/{name}`: one system's entry of the list, with its state's and events' JSON Schemas.
    func describeSystem(_ name: String) throws(APIError) -> Response {
        guard let system = host.systems[name] else {
            throw APIError(
                .systemNotFound,
                "no system is named \"\(name)\"; GET /v1/systems lists them: \(host.systemOrder.joined(separator: ", "))"
            )
        }
        return Response.json(system.description.serialized())
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
                "\"system\" (a string) is required; available: \(host.systemOrder.joined(separator: ", "))"
            )
        }
        let (session, created) = try host.startSession(
            id: id,
            system: name,
            state: members["state"],
            chosenByClient: chosenByClient
        )
        let snapshot = session.snapshot()
        var response = Response.json(
            snapshot.body(id: session.id, system: name, schema: session.schemaHash),
            status: created ? 201 : 200
        )
        response.headers.add(name: "Location", value: "/v1/sessions/\(session.id)")
        response.headers.add(staticName: "ETag") { snapshot.cursor.appendEntityTag(to: &$0) }
        return (response, session)
    }

    func getSession(_ request: Request) throws(APIError) -> Response {
        let session = try session(for: request)
        let snapshot = session.snapshot()
        if let tags = request.headers["if-none-match"], snapshot.cursor.matches(entityTags: tags) {
            return Response(status: 304, headers: HTTPHeaders([("ETag", snapshot.cursor.entityTag)]))
        }
        var response = Response.json(
            snapshot.body(id: session.id, system: session.systemName, schema: session.schemaHash),
            field: "ETag",
            valueCapacity: Cursor.entityTagCapacity
        ) { snapshot.cursor.writeEntityTag(to: $0) }
        response.headers.add(name: "Cache-Control", value: "no-cache")
        return response
    }

    func deleteSession(_ request: Request) throws(APIError) -> Response {
        try host.deleteSession(sessionID(request))
        return Response(status: 204)
    }

    /// `POST /v1/sessions/{id}/events`: answers through `completion` once the reducer applied the events and they are
    /// durable (on the thread that reduced them, often this one before it returns), or at once with the refusal.
    func postEvents(_ request: Request, completion: @escaping @Sendable (Result<SessionSnapshot, APIError>) -> Void) {
        let session: any HostedSession
        let events: PostedEvents
        let stamp: ClientStamp?
        do throws(APIError) {
            session = try self.session(for: request)
            stamp = try ClientStamp.parse(
                client: request.headers["client-id"],
                sequence: request.headers["client-sequence"]
            )
            if stamp != nil, request.headers["idempotency-key"] != nil {
                throw APIError(
                    .invalidRequest,
                    "send Client-ID and Client-Sequence or Idempotency-Key, not both: a numbered post is already "
                        + "applied at most once"
                )
            }
        } catch {
            return completion(.failure(error))
        }
        do throws(APIError) {
            events = try Self.postedEvents(request, limit: configuration.maxEventsPerBatch)
        } catch {
            guard let stamp else { return completion(.failure(error)) }
            return host.refuseSequenced(error, to: session, stamp: stamp, completion: completion)
        }
        if let stamp {
            return host.postSequenced(
                events,
                to: session,
                ifMatch: request.headers["if-match"],
                stamp: stamp,
                completion: completion
            )
        }
        host.post(
            events,
            to: session,
            ifMatch: request.headers["if-match"],
            idempotencyKey: request.headers["idempotency-key"],
            body: request.body,
            completion: completion
        )
    }

    /// The events of a POST body, as `events(in:limit:)` reads them: a body of one event of plain members is read
    /// where its bytes lie (`FlatJSONObject`, which reads it as the parser would), any other is parsed.
    static func postedEvents(_ request: Request, limit: Int) throws(APIError) -> PostedEvents {
        try requireJSON(request)
        if limit >= 1, let object = FlatJSONObject(request.body) { return PostedEvents(object) }
        return PostedEvents(try events(in: parsedBody(request), limit: limit))
    }

    /// The events of a POST body: one event object, or `{"events": [...]}` with 1 to `limit` of them.
    static func events(in body: JSONValue, limit: Int) throws(APIError) -> [JSONValue] {
        let events: [JSONValue]
        if case .object(let members) = body, members.member("type") == nil,
            case .array(let list)? = members.member("events")
        {
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
        guard let id = Self.sessionIDParameter(request) else {
            let text = request.parameter("id") ?? ""
            throw APIError(.sessionNotFound, "no session has the id \"\(text)\"; ids are 22 base64url characters")
        }
        return id
    }

    /// The route's `{id}`, read from the path's bytes (no string made for it); nil when it is not a session id.
    static func sessionIDParameter(_ request: Request) -> SessionID? {
        request.pathParameters.withUTF8("id") { SessionID(utf8: $0) } ?? nil
    }

    func session(for request: Request) throws(APIError) -> any HostedSession {
        try host.session(sessionID(request))
    }

    /// The body as JSON: 415 unless the content type is JSON, 400 with the parser's words when it is malformed.
    static func jsonBody(_ request: Request) throws(APIError) -> JSONValue {
        try requireJSON(request)
        return try parsedBody(request)
    }

    /// 415 unless the request's content type is JSON.
    static func requireJSON(_ request: Request) throws(APIError) {
        // Read as bytes: a JSON type, on every post, makes no string.
        guard let value = request.headers.valueBytes("content-type"), Self.isJSONMediaType(value) else {
            let type = request.headers["content-type"] ?? ""
            throw APIError(
                .unsupportedMediaType,
                "the body must be JSON with Content-Type: application/json; got \(type.isEmpty ? "none" : type)"
            )
        }
    }

    /// The body parsed, or 400 with the parser's words.
    static func parsedBody(_ request: Request) throws(APIError) -> JSONValue {
        do {
            return try JSONValue(parsing: request.body)
        } catch {
            let detail = request.body.isEmpty ? "the body is empty" : error.description
            throw APIError(.malformedJSON, "the body is not valid JSON: \(detail)")
        }
    }

    /// "applicat" and "ion/json" as little-endian words.
    private static let applicat = UInt64(littleEndianBytes: "applicat")
    private static let ionSlashJSON = UInt64(littleEndianBytes: "ion/json")

    /// Whether a `Content-Type` value names JSON (`application/json` or `application/*+json`, any case, any
    /// parameters): compared as bytes, since it runs for every posted body.
    static func isJSONMediaType(_ value: String) -> Bool {
        var value = value
        return value.withUTF8(isJSONMediaType)
    }

    /// `isJSONMediaType` over a field value's bytes.
    static func isJSONMediaType(_ value: ArraySlice<UInt8>) -> Bool {
        value.withUnsafeBufferPointer(isJSONMediaType)
    }

    private static func isJSONMediaType(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        // What nearly every post sends, `application/json` alone, as two words: the letters folded to lower case by
        // their 0x20 bit (which only `A`–`Z` and `a`–`z` of all bytes turn into a letter), the `/` compared as it is.
        if bytes.count == 16, let base = bytes.baseAddress {
            let first = UnsafeRawPointer(base).loadUnaligned(as: UInt64.self)
            let second = UnsafeRawPointer(base).loadUnaligned(fromByteOffset: 8, as: UInt64.self)
            if first | 0x2020_2020_2020_2020 == Self.applicat, second | 0x2020_2020_0020_2020 == Self.ionSlashJSON {
                return true
            }
        }
        func isSpace(_ byte: UInt8) -> Bool { byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") }
        func lower(_ byte: UInt8) -> UInt8 { byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z") ? byte + 32 : byte }
        func matches(_ offset: Int, _ text: StaticString) -> Bool {
            let wanted = text.utf8Start
            for i in 0..<text.utf8CodeUnitCount where lower(bytes[offset + i]) != wanted[i] { return false }
            return true
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

extension UInt64 {
    /// The word whose bytes in memory (little-endian) are the eight of `text`.
    fileprivate init(littleEndianBytes text: StaticString) {
        precondition(text.utf8CodeUnitCount == 8)
        var word: UInt64 = 0
        for index in 0..<8 { word |= UInt64(text.utf8Start[index]) << (8 * index) }
        self = word
    }
}
