import HTTPServer
import SessionRuntime

/// How an `APIRoute` answers later: the route's `Responder` and the request's `Origin` (not the whole request),
/// so that an answer given from the journal's thread gets the same CORS fields as one given at once.
///
/// A value; `respond` may be called from any thread, once (the `Responder` ignores later calls).
struct CORSResponder: Sendable {
    let service: SessionService
    let responder: Responder
    let origin: String?

    /// Answers `result` (a problem for a failure) with the CORS fields.
    func respond(_ result: consuming Result<Response, APIError>) {
        responder.respond(service.withCORS(consume result, origin: origin))
    }
}
