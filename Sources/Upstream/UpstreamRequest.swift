/// What to send upstream: method, URL, header fields and an optional body.
///
/// A value type: safe to pass anywhere.
public struct UpstreamRequest: Sendable, Hashable {
    /// The request method, for example `GET` or `POST`.
    public var method: String
    /// The absolute `http` or `https` URL.
    public var url: String
    /// Header fields to send. `Accept-Encoding` is set by the client (gzip, deflate, br, zstd).
    public var headers: UpstreamHeaders
    /// The body to send, or nil for none.
    public var body: [UInt8]?
    /// A total timeout for this request in milliseconds, replacing the configured one; 0 means none.
    public var totalTimeoutMilliseconds: Int?

    /// Creates a request.
    public init(
        method: String = "GET",
        url: String,
        headers: UpstreamHeaders = [:],
        body: [UInt8]? = nil,
        totalTimeoutMilliseconds: Int? = nil
    ) {
        self.method = method
        self.url = url
        self.headers = headers
        self.body = body
        self.totalTimeoutMilliseconds = totalTimeoutMilliseconds
    }
}
