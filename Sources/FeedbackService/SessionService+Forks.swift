import FeedbackJSON
import HTTPServer
import SessionInspection
import SessionRuntime

/// Forks and paused effects (issue 32): `POST /v1/sessions/{id}/forks` with `{"rev": N}` starts a new session from
/// the state at revision N, answered as a create is (201, `Location`, `ETag`, the snapshot, minted tokens when the
/// server mints them) plus `"forkOf": {"id", "rev"}` and `"effects": "paused"`; `POST /v1/sessions/{id}/effects/resume`
/// starts a paused fork's effects (or a runaway's stopped feedbacks). Both need the admin scope and, like the other
/// inspection routes, the inspector on. The work is `SessionHost+Forks`'.
extension SessionService {
    var forkRoutes: [APIRoute] {
        [
            APIRoute(
                .post,
                "/v1/sessions/{id}/forks",
                maxBodySize: 1024,
                .session(.admin),
                .later { [self] request, _, responder in
                    answerOnceDurable(responder) { () throws(APIError) in try withTokens(fork(request)) }
                }
            ),
            APIRoute(
                .post,
                "/v1/sessions/{id}/effects/resume",
                maxBodySize: 0,
                .session(.admin),
                .later { [self] request, _, responder in
                    answerOnceDurable(responder) { () throws(APIError) in
                        try inspectorIsOn()
                        let session = try host.resumeEffects(of: sessionID(request))
                        let snapshot = session.snapshot()
                        var response = Response.json(
                            snapshot.body(id: session.id, system: session.systemName, schema: session.schemaHash)
                        )
                        response.headers.add(name: "ETag", value: snapshot.cursor.entityTag)
                        response.headers.add(name: "Cache-Control", value: "no-store")
                        return (response, session)
                    }
                }
            ),
        ]
    }

    /// `POST /v1/sessions/{id}/forks`: the fork's answer and the fork, whose creation (with its pause) it waits for.
    private func fork(_ request: Request) throws(APIError) -> (Response, any HostedSession) {
        try inspectorIsOn()
        let id = try sessionID(request)
        let revision = try Self.forkRevision(Self.jsonBody(request))
        let session = try host.fork(of: id, at: revision)
        let snapshot = session.snapshot()
        var body = snapshot.body(id: session.id, system: session.systemName, schema: session.schemaHash)
        // The create's answer, one object, with what a fork adds.
        if body.last == UInt8(ascii: "}") {
            body.removeLast()
            let forkOf = JSONValue.object(["id": .string(id.description), "rev": .int(Int64(revision))])
            body.append(contentsOf: #","forkOf":"#.utf8)
            body.append(contentsOf: forkOf.serialized())
            body.append(contentsOf: #","effects":"paused"}"#.utf8)
        }
        var response = Response.json(body, status: 201)
        response.headers.add(name: "Location", value: "/v1/sessions/\(session.id)")
        response.headers.add(name: "ETag", value: snapshot.cursor.entityTag)
        return (response, session)
    }

    /// The revision of a fork's body, `{"rev": N}` with N a whole number from 0.
    private static func forkRevision(_ body: JSONValue) throws(APIError) -> UInt64 {
        guard case .object(let members) = body else {
            throw APIError(
                .invalidRequest,
                "the body is a JSON object naming the revision to fork at, like {\"rev\": 12}"
            )
        }
        if let other = members.keys.sorted().first(where: { $0 != "rev" }) {
            throw APIError(.invalidRequest, "a fork's body has one member, \"rev\"; \"\(other)\" is not one")
        }
        switch members["rev"] {
        case .int(let value)? where value >= 0:
            return UInt64(value)
        case .double(let value)? where value >= 0 && value.rounded() == value:
            // A whole number past Int64 (the parser gives it as a Double): a revision no session has reached.
            return UInt64(exactly: value) ?? .max
        case nil:
            throw APIError(.invalidRequest, "\"rev\" is missing: give the revision to fork at, a whole number from 0")
        case let value?:
            throw APIError(
                .invalidRequest,
                "\"rev\" is a revision, a whole number from 0, not \(String(decoding: value.serialized(), as: UTF8.self))"
            )
        }
    }
}
