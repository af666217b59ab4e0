import HTTPServer
import SessionAuth

extension BearerToken {
    /// The token of `request`, or nil when it carries none where this route looks.
    static func find(in request: Request, streamRoute: Bool) -> String? {
        find(
            authorization: request.headers["authorization"],
            cookie: request.headers["cookie"],
            query: request.queryParameter(queryName),
            streamRoute: streamRoute
        )
    }
}
