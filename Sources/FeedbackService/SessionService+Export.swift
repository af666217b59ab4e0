import FeedbackJSON
import HTTPServer
import SessionInspection
import SessionRuntime
import SystemKit

/// `GET /v1/sessions/{id}/export`: a session as a test fixture (`SessionFixture`), from what the journal kept
/// (`SessionHost+Export`).
extension SessionService {
    /// The export route, behind the read scope like `GET /v1/sessions/{id}`.
    var exportRoutes: [APIRoute] {
        [
            APIRoute(
                .get,
                "/v1/sessions/{id}/export",
                .session(.read),
                .now { [self] (request, _) throws(APIError) in try exportSession(request) }
            )
        ]
    }

    /// The fixture of the session the request names; 409 without a journal, 404 for an unknown session.
    func exportSession(_ request: Request) throws(APIError) -> Response {
        let fixture = try host.exportFixture(of: sessionID(request))
        var response = Response.json(fixture.json.serialized())
        response.headers.add(name: "Cache-Control", value: "no-store")
        return response
    }
}
