import HTTPServer

/// Where a request carries its token: `Authorization: Bearer` on every route; on the stream route also the
/// `feedbackhost_token` cookie and the `access_token` query parameter, since `EventSource` cannot set headers.
///
/// Pure functions.
enum BearerToken {
    /// The cookie the stream route reads.
    static let cookieName = "feedbackhost_token"
    /// The query parameter the stream route reads.
    static let queryName = "access_token"

    /// The token of `request`, or nil when it carries none where this route looks.
    static func find(in request: Request, streamRoute: Bool) -> String? {
        if let value = request.headers["authorization"] {
            let parts = value.split(separator: " ", maxSplits: 1, omittingEmptySubsequences: true)
            guard parts.count == 2, parts[0].lowercased() == "bearer" else { return nil }
            let token = parts[1].trimmedOfBlanks()
            return token.isEmpty ? nil : token
        }
        guard streamRoute else { return nil }
        if let cookies = request.headers["cookie"] {
            for pair in cookies.split(separator: ";") {
                let parts = pair.split(separator: "=", maxSplits: 1)
                if parts.count == 2, parts[0].trimmedOfBlanks() == cookieName {
                    let token = parts[1].trimmedOfBlanks()
                    if !token.isEmpty { return token }
                }
            }
        }
        if let token = request.queryParameter(queryName), !token.isEmpty { return token }
        return nil
    }
}

extension Substring {
    fileprivate func trimmedOfBlanks() -> String {
        String(drop { $0 == " " || $0 == "\t" }.reversed().drop { $0 == " " || $0 == "\t" }.reversed())
    }
}
