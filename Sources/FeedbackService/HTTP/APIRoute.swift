import HTTPServer
import SessionAuth
import SessionRuntime

/// One route of the API as `SessionService` declares it: its method, path and body limit, the token check it
/// needs and what it answers. `SessionService.register(_:in:)` registers every one the same way: the token check
/// first (none for an open route), then the answer, with the CORS fields on every response, refusals included.
/// So no handler checks a token or adds a CORS field itself.
struct APIRoute: Sendable {
    /// What a route answers, without the CORS fields.
    enum Answer: Sendable {
        /// At once, on the shard queue.
        case now(@Sendable (Request, Grant?) throws(APIError) -> Response)
        /// Through the `CORSResponder`, now or later from any thread (a write that waits for the journal).
        case later(@Sendable (Request, Grant?, CORSResponder) -> Void)
    }

    var method: HTTPMethod
    var path: String
    /// The body limit; nil for the router's default.
    var maxBodySize: Int?
    /// The token check; nil for an open route (no token, no look at the session's owner).
    var requirement: Authorizer.Requirement?
    /// The stream route, whose token may also come as a query parameter or cookie (`EventSource` sends no header).
    var streamRoute = false
    var answer: Answer

    init(
        _ method: HTTPMethod,
        _ path: String,
        maxBodySize: Int? = nil,
        _ requirement: Authorizer.Requirement?,
        streamRoute: Bool = false,
        _ answer: Answer
    ) {
        self.method = method
        self.path = path
        self.maxBodySize = maxBodySize
        self.requirement = requirement
        self.streamRoute = streamRoute
        self.answer = answer
    }
}
