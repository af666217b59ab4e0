/// Where a request carries its token: `Authorization: Bearer` on every route; on the stream route also the
/// `feedbackhost_token` cookie and the `access_token` query parameter, since `EventSource` cannot set headers.
/// It reads the fields' text, not a request: the API hands them over (`BearerToken.find(in:streamRoute:)`), so auth
/// needs no HTTPServer.
///
/// Pure functions.
package enum BearerToken {
    /// The cookie the stream route reads.
    package static let cookieName = "feedbackhost_token"
    /// The query parameter the stream route reads.
    package static let queryName = "access_token"

    /// The token of a request with these `Authorization` and `Cookie` fields and `access_token` query parameter, or
    /// nil when it carries none where this route looks. The cookie and the query are read only when needed.
    package static func find(
        authorization: String?,
        cookie: @autoclosure () -> String?,
        query: @autoclosure () -> String?,
        streamRoute: Bool
    ) -> String? {
        if let value = authorization {
            // `Bearer` in any case, a space, the token (RFC 6750 §2.1), read as bytes.
            let utf8 = value.utf8
            var index = utf8.startIndex
            for expected in "bearer".utf8 {
                guard index < utf8.endIndex, utf8[index] | 0x20 == expected else { return nil }
                index = utf8.index(after: index)
            }
            guard index < utf8.endIndex, utf8[index] == UInt8(ascii: " ") else { return nil }
            let token = value[index...].trimmedOfBlanks()
            return token.isEmpty ? nil : token
        }
        guard streamRoute else { return nil }
        if let cookies = cookie() {
            for pair in cookies.split(separator: ";") {
                let parts = pair.split(separator: "=", maxSplits: 1)
                if parts.count == 2, parts[0].trimmedOfBlanks() == cookieName {
                    let token = parts[1].trimmedOfBlanks()
                    if !token.isEmpty { return token }
                }
            }
        }
        if let token = query(), !token.isEmpty { return token }
        return nil
    }
}

extension Substring {
    /// Without leading and trailing spaces and tabs, found as bytes: it runs for every request with a token (a
    /// `reversed()` over `Character`s here cost 40 % of a posted event's CPU).
    fileprivate func trimmedOfBlanks() -> String {
        let isBlank: (UInt8) -> Bool = { $0 == UInt8(ascii: " ") || $0 == UInt8(ascii: "\t") }
        guard let first = utf8.firstIndex(where: { !isBlank($0) }), let last = utf8.lastIndex(where: { !isBlank($0) })
        else { return "" }
        return String(self[first...last])
    }
}
