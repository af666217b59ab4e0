import FeedbackJSON
import HTTPServer
import SessionRuntime
import SystemKit

/// `GET /v1/sessions/{id}/export`: a session as a test fixture (`SessionFixture`), from what the journal kept
/// (`SessionHost+Export`).
extension SessionService {
    /// Registers the export route, behind the read scope like `GET /v1/sessions/{id}`.
    func registerExport(in router: inout Router) {
        let export = guarded(.session(.read)) { [self] request, _ in
            respond(to: request) { () throws(APIError) in try exportSession(request) }
        }
        router.route(.get, "/v1/sessions/{id}/export", handler: export)
    }

    /// The fixture of the session the request names; 409 without a journal, 404 for an unknown session.
    func exportSession(_ request: Request) throws(APIError) -> Response {
        let fixture = try host.exportFixture(of: sessionID(request))
        var response = Response.json(fixture.json.serialized())
        response.headers.add(name: "Cache-Control", value: "no-store")
        return response
    }
}
