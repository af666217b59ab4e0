/// A parsed and validated request head: request line, header fields and what they mean for framing.
///
/// A value produced by `RequestParser` on the shard queue.
public struct RequestHead: Sendable, Equatable {
    /// How the body is delimited (RFC 9112 section 6.3).
    public enum Framing: Sendable, Equatable {
        /// No body.
        case none
        /// Exactly this many bytes.
        case length(Int)
        /// Chunked transfer coding.
        case chunked
    }

    /// The method.
    public var method: HTTPMethod
    /// The request target as sent (origin-form, absolute-form or `*`).
    public var target: String {
        get { spelledTarget ?? path }
        set { spelledTarget = newValue == path ? nil : newValue }
    }
    /// The target when it is not the path alone (a query, absolute-form): most requests' target is their path, kept
    /// once (a head is copied a few times on its way; each stored string is one more reference to count).
    private var spelledTarget: String?
    /// The path part of the target (for absolute-form, the path after the authority), not percent-decoded.
    public var path: String
    /// The query after `?`, not percent-decoded, or nil.
    public var query: String?
    /// HTTP minor version: 0 or 1 (every later 1.x is handled as 1.1).
    public var minorVersion: Int
    /// The header fields in order.
    public var headers: HTTPHeaders
    /// How the body is delimited.
    public var framing: Framing
    /// Whether the connection may stay open after this exchange as far as the request says.
    public var keepAlive: Bool
    /// Whether the client sent `Expect: 100-continue`.
    public var expectsContinue: Bool

    /// Creates a head (the parser does; tests of handlers may build one directly).
    public init(
        method: HTTPMethod,
        path: String,
        query: String? = nil,
        headers: HTTPHeaders = HTTPHeaders(),
        minorVersion: Int = 1,
        framing: Framing = .none,
        keepAlive: Bool = true,
        expectsContinue: Bool = false,
        target: String? = nil
    ) {
        self.method = method
        self.path = path
        let target = target ?? query.map { "\(path)?\($0)" }
        self.spelledTarget = target == path ? nil : target
        self.query = query
        self.minorVersion = minorVersion
        self.headers = headers
        self.framing = framing
        self.keepAlive = keepAlive
        self.expectsContinue = expectsContinue
    }
}
