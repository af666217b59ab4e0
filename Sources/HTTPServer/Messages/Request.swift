/// A complete request as a handler sees it: head, whole body, trailers and the route's path parameters.
///
/// An immutable-by-convention value, built on the shard queue and handed to the handler.
public struct Request: Sendable {
    /// The validated head.
    public var head: RequestHead
    /// The body bytes (empty when there is none).
    public var body: [UInt8]
    /// Trailer fields of a chunked body.
    public var trailers: HTTPHeaders
    /// Values of the route's `{name}` segments, percent-decoded.
    public var pathParameters: PathParameters

    /// Creates a request (the server does; tests of handlers may too).
    public init(
        head: RequestHead,
        body: [UInt8] = [],
        trailers: HTTPHeaders = HTTPHeaders(),
        pathParameters: PathParameters = [:]
    ) {
        self.head = head
        self.body = body
        self.trailers = trailers
        self.pathParameters = pathParameters
    }

    /// The method.
    public var method: HTTPMethod { head.method }
    /// The path, not percent-decoded.
    public var path: String { head.path }
    /// The query string after `?`, if any.
    public var query: String? { head.query }
    /// The header fields.
    public var headers: HTTPHeaders { head.headers }

    /// The value of the path parameter `name`.
    public func parameter(_ name: String) -> String? { pathParameters[name] }

    /// The first value of the query parameter `name`, percent-decoded (`+` is a space).
    public func queryParameter(_ name: String) -> String? {
        guard let query else { return nil }
        for pair in query.split(separator: "&", omittingEmptySubsequences: true) {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            if PercentDecoding.decode(parts[0], plusIsSpace: true) == name {
                return parts.count > 1 ? PercentDecoding.decode(parts[1], plusIsSpace: true) ?? "" : ""
            }
        }
        return nil
    }

    /// Every value of the query parameter `name`, in order, percent-decoded (`+` is a space); malformed ones are
    /// left out.
    public func queryParameters(_ name: String) -> [String] {
        guard let query else { return [] }
        var values: [String] = []
        for pair in query.split(separator: "&", omittingEmptySubsequences: true) {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            guard PercentDecoding.decode(parts[0], plusIsSpace: true) == name else { continue }
            if parts.count == 1 {
                values.append("")
            } else if let value = PercentDecoding.decode(parts[1], plusIsSpace: true) {
                values.append(value)
            }
        }
        return values
    }
}

/// Percent-decoding of path segments and query components; pure.
enum PercentDecoding {
    /// Decodes `%XX` escapes; nil when an escape is malformed or the result is not UTF-8.
    static func decode(_ s: Substring, plusIsSpace: Bool) -> String? {
        guard s.utf8.contains(UInt8(ascii: "%")) || (plusIsSpace && s.utf8.contains(UInt8(ascii: "+"))) else {
            return String(s)
        }
        return decodeEscapes(s.utf8, plusIsSpace: plusIsSpace)
    }

    /// Decodes `%XX` escapes in bytes that are valid UTF-8 (a slice of a `String`'s UTF-8 between ASCII
    /// delimiters); nil when an escape is malformed or the result is not UTF-8.
    static func decode(_ bytes: UnsafeBufferPointer<UInt8>, plusIsSpace: Bool) -> String? {
        guard bytes.contains(UInt8(ascii: "%")) || (plusIsSpace && bytes.contains(UInt8(ascii: "+"))) else {
            return String(decoding: bytes, as: UTF8.self)
        }
        return decodeEscapes(bytes, plusIsSpace: plusIsSpace)
    }

    private static func decodeEscapes(_ bytes: some Collection<UInt8>, plusIsSpace: Bool) -> String? {
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count)
        var it = bytes.makeIterator()
        while let b = it.next() {
            if b == UInt8(ascii: "%") {
                guard let h = it.next().flatMap(ASCII.hexValue), let l = it.next().flatMap(ASCII.hexValue) else {
                    return nil
                }
                out.append(UInt8(h << 4 | l))
            } else if plusIsSpace, b == UInt8(ascii: "+") {
                out.append(ASCII.sp)
            } else {
                out.append(b)
            }
        }
        return String(validating: out, as: UTF8.self)
    }
}
