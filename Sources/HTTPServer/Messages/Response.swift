/// A response a handler returns: status, header fields and either whole body bytes or a stream started later.
///
/// A `Sendable` value; the server serializes it on the connection's shard queue. `Content-Length`,
/// `Transfer-Encoding`, `Connection` and `Date` are set by the server, not by handlers.
public struct Response: Sendable {
    /// The body of a response.
    public enum Body: Sendable {
        /// Whole bytes, sent with `Content-Length`.
        case bytes([UInt8])
        /// A body written over time through a `ResponseStream` (chunked on HTTP/1.1). The closure runs on the
        /// shard queue right after the head is queued; keep the stream and write to it from any thread.
        /// For a HEAD request only the head is sent and the closure is not called.
        case stream(@Sendable (ResponseStream) -> Void)
    }

    /// The status code.
    public var status: Int
    /// The header fields.
    public var headers: HTTPHeaders
    /// The body.
    public var body: Body

    /// Creates a response with whole body bytes.
    public init(status: Int = 200, headers: HTTPHeaders = HTTPHeaders(), body: [UInt8] = []) {
        self.status = status
        self.headers = headers
        self.body = .bytes(body)
    }

    /// Creates a response with a streamed body.
    public init(
        status: Int = 200,
        headers: HTTPHeaders = HTTPHeaders(),
        stream: @escaping @Sendable (ResponseStream) -> Void
    ) {
        self.status = status
        self.headers = headers
        self.body = .stream(stream)
    }

    /// A response whose body is JSON bytes the caller encoded.
    public static func json(_ bytes: [UInt8], status: Int = 200) -> Response {
        Response(status: status, headers: HTTPHeaders("Content-Type", "application/json"), body: bytes)
    }

    /// A JSON response with one more field, `name`, whose value `write` writes in place into room for
    /// `valueCapacity` bytes and returns its length (a post's answer and its `ETag`: both fields in one allocation).
    /// For the package's own answers: `write` must not pass its room (it is stack memory).
    package static func json(
        _ bytes: [UInt8],
        status: Int = 200,
        field name: StaticString,
        valueCapacity: Int,
        value write: (UnsafeMutablePointer<UInt8>) -> Int
    ) -> Response {
        Response(
            status: status,
            headers: HTTPHeaders("Content-Type", "application/json", name, valueCapacity: valueCapacity, write),
            body: bytes
        )
    }

    /// A plain-text response.
    public static func text(_ text: String, status: Int = 200) -> Response {
        Response(
            status: status,
            headers: HTTPHeaders([("Content-Type", "text/plain; charset=utf-8")]),
            body: Array(text.utf8)
        )
    }

    /// An RFC 9457 `application/problem+json` response (`type` is `about:blank`; see `Problem`).
    public static func problem(status: Int, detail: String) -> Response {
        Problem(status: status, detail: detail).response()
    }

    /// The problem response for a module error.
    public static func problem(_ error: HTTPServerError) -> Response {
        Problem(error).response()
    }

    /// A `text/event-stream` response; `start` receives the stream (see `Body.stream`).
    public static func eventStream(_ start: @escaping @Sendable (ResponseStream) -> Void) -> Response {
        Response(
            status: 200,
            headers: HTTPHeaders([("Content-Type", "text/event-stream"), ("Cache-Control", "no-cache")]),
            stream: start
        )
    }
}
