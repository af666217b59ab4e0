import FeedbackJSON
public import HTTPServer
public import SessionRuntime

/// The one place an `APIError` becomes an HTTP answer.
extension APIError {
    /// The RFC 9457 problem: `type` (a URN naming the code, listed in docs/API.md), `title`, `status`, `detail`, and
    /// any extra members.
    public var problem: Problem {
        Problem(
            type: "urn:feedbackhost:problem:\(code.rawValue)",
            title: code.title,
            status: code.status,
            detail: message,
            extensions: extra.mapValues { $0.serialized() }
        )
    }

    /// The problem as a response, with `Retry-After` and `WWW-Authenticate` when the error has them.
    var response: Response {
        var headers = HTTPHeaders()
        if let retryAfter { headers.add(name: "Retry-After", value: String(retryAfter)) }
        if let challenge { headers.add(name: "WWW-Authenticate", value: challenge) }
        return problem.response(headers: headers)
    }
}
