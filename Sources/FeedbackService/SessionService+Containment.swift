import FeedbackJSON
import HTTPServer

/// The containment's routes (docs/API.md, "Containment"): what the host contained of a session's system, the
/// resume of feedbacks stopped as a runaway, and the release of a quarantined session.
extension SessionService {
    var containmentRoutes: [APIRoute] {
        [
            APIRoute(
                .get,
                "/v1/sessions/{id}/containment",
                .session(.read),
                .now { [self] (request, _) throws(APIError) in try Self.containmentResponse(session(for: request)) }
            ),
            APIRoute(
                .post,
                "/v1/sessions/{id}/resume",
                maxBodySize: 0,
                .session(.admin),
                .now { [self] (request, _) throws(APIError) in
                    // The same resume as a fork's (`POST …/effects/resume`), whose pause it ends too.
                    try Self.containmentResponse(host.resumeEffects(of: sessionID(request)))
                }
            ),
            APIRoute(
                .post,
                "/v1/sessions/{id}/release",
                maxBodySize: 0,
                .session(.admin),
                .now { [self] (request, _) throws(APIError) in
                    let id = try sessionID(request)
                    guard try host.releaseQuarantine(id) else {
                        throw APIError(.notQuarantined, "session \(id) is not quarantined: nothing to release")
                    }
                    let session = try host.session(id)
                    let snapshot = session.snapshot()
                    var response = Response.json(
                        snapshot.body(id: session.id, system: session.systemName, schema: session.schemaHash)
                    )
                    response.headers.add(name: "ETag", value: snapshot.cursor.entityTag)
                    return response
                }
            ),
        ]
    }

    /// The containment report of `session` as JSON; members that did not happen are left out.
    static func containmentResponse(_ session: any HostedSession) throws(APIError) -> Response {
        let report = session.containment?.report ?? SessionGuard.Report()
        var members: [String: JSONValue] = [
            "feedbacks": .string(report.feedbacks),
            "slowReduces": .int(Int64(report.slowReduces)),
            "offloaded": .bool(report.offloaded),
        ]
        if let loudest = report.loudestFeedback { members["loudestFeedback"] = .string(loudest) }
        if let at = report.throttledAt { members["throttledAt"] = .double(at) }
        if let at = report.stoppedAt { members["stoppedAt"] = .double(at) }
        if let slowest = report.slowestReduce {
            members["slowestReduce"] = .object([
                "event": .string(slowest.event), "milliseconds": .double(slowest.milliseconds),
            ])
        }
        var response = Response.json(JSONValue.object(members).serialized())
        response.headers.add(name: "Cache-Control", value: "no-store")
        return response
    }
}
