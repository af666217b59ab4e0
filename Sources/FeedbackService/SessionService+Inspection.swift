import FeedbackJSON
import Foundation
import HTTPServer
import SessionAuth
import SessionInspection
import SessionRuntime

/// The inspection routes (issue 32): `GET /v1/sessions/{id}/history`, `/states/{rev}`, `/diff` and `GET /v1/sessions`,
/// behind the `inspect` scope (`--auth jwt`) and answered only with `--inspector on` (the default at a loopback
/// address). The answers are made by `SessionHost+Inspection` and `SessionHost+SessionList`; this file parses the
/// query and renders the JSON.
extension SessionService {
    var inspectionRoutes: [APIRoute] {
        [
            APIRoute(
                .get,
                "/v1/sessions/{id}/history",
                .session(.inspect),
                .now { [self] (request, _) throws(APIError) in
                    try inspected(request) { () throws(APIError) in try history(request) }
                }
            ),
            APIRoute(
                .get,
                "/v1/sessions/{id}/states/{rev}",
                .session(.inspect),
                .now { [self] (request, _) throws(APIError) in
                    try inspected(request) { () throws(APIError) in
                        try host.state(of: sessionID(request), at: revision(request.parameter("rev"), "rev"))
                    }
                }
            ),
            APIRoute(
                .get,
                "/v1/sessions/{id}/diff",
                .session(.inspect),
                .now { [self] (request, _) throws(APIError) in
                    try inspected(request) { () throws(APIError) in
                        try host.diff(
                            of: sessionID(request),
                            from: revision(request.queryParameter("from"), "from"),
                            to: revision(request.queryParameter("to"), "to")
                        )
                    }
                }
            ),
            APIRoute(
                .get,
                "/v1/sessions",
                .listing(.inspect),
                .now { [self] (request, grant) throws(APIError) in
                    try inspected(request) { () throws(APIError) in try list(request, grant: grant) }
                }
            ),
        ]
    }

    /// The answer `body` makes, as JSON not to be cached; 404 `inspector-off` when the routes are off.
    private func inspected(_ request: Request, _ body: () throws(APIError) -> JSONValue) throws(APIError) -> Response {
        try inspectorIsOn()
        var response = Response.json(try body().serialized())
        response.headers.add(name: "Cache-Control", value: "no-store")
        return response
    }

    /// 404 `inspector-off` unless the inspection routes (forks among them) are on.
    func inspectorIsOn() throws(APIError) {
        guard configuration.inspector else {
            throw APIError(
                .inspectorOff,
                "the inspection routes are off on this server: start it with --inspector on (they are on by default "
                    + "only at a loopback address)"
            )
        }
    }

    private func history(_ request: Request) throws(APIError) -> JSONValue {
        let after = try request.queryParameter("after").map { text throws(APIError) in try revision(text, "after") }
        let before = try request.queryParameter("before").map { text throws(APIError) in try revision(text, "before") }
        let origin = request.queryParameter("origin")
        if let origin, origin != "client", origin != "effect" {
            throw APIError(.invalidRequest, "origin is client or effect, not \"\(origin)\"")
        }
        if request.queryParameter("type") == "" {
            throw APIError(.invalidRequest, "type is the name of an event type (its \"type\" member), not empty")
        }
        return try host.history(
            of: sessionID(request),
            SessionHost.HistoryQuery(
                after: after,
                before: before,
                limit: try limit(request, default: 100, max: SessionHost.historyPageLimit),
                origin: origin,
                type: request.queryParameter("type")
            )
        )
    }

    private func list(_ request: Request, grant: Grant?) throws(APIError) -> JSONValue {
        let status = request.queryParameter("status")
        if let status, !["active", "passive", "broken"].contains(status) {
            throw APIError(.invalidRequest, "status is active, passive or broken, not \"\(status)\"")
        }
        let system = request.queryParameter("system")
        if let system, host.systems[system] == nil {
            throw APIError(.systemNotFound, "no system is called \"\(system)\"; GET /v1/systems lists them")
        }
        let cursor = request.queryParameter("cursor")
        if let cursor, !Self.isCursor(cursor) {
            throw APIError(.invalidRequest, "cursor is the next of a previous page, not \"\(cursor)\"")
        }
        return try host.listSessions(
            SessionHost.ListQuery(
                system: system,
                status: status,
                cursor: cursor,
                limit: try limit(request, default: 100, max: 1000),
                covers: { id, system in grant?.covers(id, system: system) ?? true },
                counted: grant.map { $0.sessionID == nil && !$0.coversByPrefix } ?? true
            )
        )
    }

    /// A list's cursor as `listSessions` makes them (openapi.yaml's pattern): `a:N`, `b:N`, `j` or `j:TIME:ID`.
    private static func isCursor(_ text: String) -> Bool {
        if text == "j" { return true }
        let parts = text.split(separator: ":", maxSplits: 2, omittingEmptySubsequences: false)
        func digits(_ part: Substring, _ most: Int) -> Bool {
            (1...most).contains(part.count) && part.unicodeScalars.allSatisfy { ("0"..."9").contains($0) }
        }
        switch parts.first {
        case "a", "b": return parts.count == 2 && digits(parts[1], 18)
        case "j":
            let idCharacters = CharacterSet.alphanumerics.union(CharacterSet(charactersIn: "-_"))
            return parts.count == 3 && digits(parts[1], 19) && parts[2].count <= 64
                && parts[2].unicodeScalars.allSatisfy { $0.isASCII && idCharacters.contains($0) }
        default: return false
        }
    }

    private func revision(_ text: String?, _ name: String) throws(APIError) -> UInt64 {
        guard let text else {
            throw APIError(.invalidRequest, "\(name) is missing: give a revision, a whole number from 0")
        }
        // Any revision a UInt64 holds: one past the head is 404 (revision-not-found), not a malformed request.
        guard let value = UInt64(text) else {
            throw APIError(.invalidRequest, "\(name) is a revision, a whole number from 0, not \"\(text)\"")
        }
        return value
    }

    private func limit(_ request: Request, default value: Int, max: Int) throws(APIError) -> Int {
        guard let text = request.queryParameter("limit") else { return value }
        guard let limit = Int(text), (1...max).contains(limit) else {
            throw APIError(.invalidRequest, "limit is a whole number from 1 to \(max), not \"\(text)\"")
        }
        return limit
    }
}
