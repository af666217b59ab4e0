/// The status line and header fields of a response: what a stream knows before its body arrives.
///
/// A value type: safe to pass anywhere.
public struct UpstreamHead: Sendable, Hashable {
    /// The HTTP status code, for example 200 or 404.
    public var status: Int
    /// The response header fields of the final response (after any followed redirects).
    public var headers: UpstreamHeaders
    /// The URL that answered (differs from the request's when redirects were followed).
    public var url: String

    /// Creates a head.
    public init(status: Int, headers: UpstreamHeaders, url: String) {
        self.status = status
        self.headers = headers
        self.url = url
    }
}

/// A complete response: status, header fields and the decoded body.
///
/// An HTTP error status is a response like any other. A value type: safe to pass anywhere.
public struct UpstreamResponse: Sendable, Hashable {
    /// The status code, header fields and URL.
    public var head: UpstreamHead
    /// The body, decoded from gzip, deflate, br or zstd when the upstream encoded it.
    public var body: [UInt8]

    /// Creates a response.
    public init(head: UpstreamHead, body: [UInt8]) {
        self.head = head
        self.body = body
    }

    /// The HTTP status code.
    public var status: Int { head.status }
    /// The response header fields.
    public var headers: UpstreamHeaders { head.headers }
    /// The URL that answered.
    public var url: String { head.url }
    /// The body decoded as UTF-8 (invalid sequences replaced).
    public var bodyText: String { String(decoding: body, as: UTF8.self) }
}
