/// An incremental scanner of HTTP/1.1 request heads (RFC 9112 sections 2 to 5), strict about everything that leads
/// to request smuggling or ambiguity. `RequestDecoder` drives it for heads and `BodyDecoder` for bodies.
///
/// A pure value type with no I/O: the connection that owns it calls it on its shard queue. The caller keeps the
/// unconsumed bytes at the front of its buffer and calls `parseHead` again with the same prefix plus new bytes;
/// the parser resumes its scan where it stopped. It never traps, whatever the input.
public struct RequestParser: Sendable {
    /// Size limits checked while the head arrives.
    public struct Limits: Sendable, Equatable {
        /// Longest request line (414 beyond).
        public var maxRequestLineLength: Int
        /// Largest header block including the request line (431 beyond).
        public var maxHeaderBytes: Int
        /// Most header fields (431 beyond).
        public var maxHeaderCount: Int

        /// Creates limits; the defaults are nginx's order of magnitude.
        public init(maxRequestLineLength: Int = 8192, maxHeaderBytes: Int = 16384, maxHeaderCount: Int = 100) {
            self.maxRequestLineLength = maxRequestLineLength
            self.maxHeaderBytes = maxHeaderBytes
            self.maxHeaderCount = maxHeaderCount
        }
    }

    /// The outcome of one call to `parseHead`.
    public enum HeadResult: Sendable, Equatable {
        /// The head is not complete yet.
        case needMore
        /// A complete head, and how many bytes of the buffer it took.
        case head(RequestHead, consumed: Int)
    }

    /// The limits in force.
    public var limits: Limits
    private var scanned = 0
    private var lineStart = 0
    private var requestLine: Range<Int>?
    private var fieldCount = 0

    /// Creates a parser with limits.
    public init(limits: Limits = Limits()) {
        self.limits = limits
    }

    /// Scans for the end of the head and, once it is there, validates and returns it.
    public mutating func parseHead(_ buffer: UnsafeBufferPointer<UInt8>) throws(HTTPServerError) -> HeadResult {
        var i = scanned
        let end = buffer.count
        // The tables read once, not per byte: each read of a static array is a `swift_once` call.
        let requestLineBytes = ASCII.requestLine
        let fieldValueBytes = ASCII.fieldValue
        while i < end {
            let b = buffer[i]
            if b == ASCII.lf {
                guard i > 0, buffer[i - 1] == ASCII.cr, i - 1 >= lineStart else {
                    throw HTTPServerError(.badRequest, "A line ends with a bare LF.")
                }
                let lineEnd = i - 1
                if requestLine == nil {
                    if lineEnd == lineStart {
                        // RFC 9112 2.2: ignore empty lines before the request line, but only a few.
                        guard lineStart < 8 else { throw HTTPServerError(.badRequest, "Too many empty lines.") }
                    } else {
                        guard lineEnd - lineStart <= limits.maxRequestLineLength else {
                            throw HTTPServerError(.uriTooLong, "The request line is too long.")
                        }
                        requestLine = lineStart..<lineEnd
                    }
                } else if lineEnd == lineStart {
                    let head = try Self.validate(
                        buffer,
                        requestLine: requestLine!,
                        fieldsEnd: i + 1,
                        fields: fieldCount
                    )
                    self.reset()
                    return .head(head, consumed: i + 1)
                } else {
                    fieldCount += 1
                    guard fieldCount <= limits.maxHeaderCount else {
                        throw HTTPServerError(.headerFieldsTooLarge, "Too many header fields.")
                    }
                }
                lineStart = i + 1
            } else if i > 0, buffer[i - 1] == ASCII.cr {
                // Judged at the byte after the CR, so the verdict never depends on where a read ended.
                throw HTTPServerError(.badRequest, "A bare CR in the head.")
            } else if b != ASCII.cr, !(requestLine == nil ? requestLineBytes[Int(b)] : fieldValueBytes[Int(b)]) {
                // NUL, controls, or a TLS handshake: refused at the byte, not after waiting for a line end.
                throw HTTPServerError(.badRequest, "The head holds a byte no request line or field may hold.")
            }
            i += 1
            // The bytes of a line up to its CR are mostly ordinary (no CR, LF or refused byte, and the byte before is
            // not a CR): run over them with the one test they need, each judged as the step above would judge it.
            let inRequestLine = requestLine == nil
            let last = inRequestLine ? lineStart + limits.maxRequestLineLength + 2 : limits.maxHeaderBytes
            // The byte classes' own tests (the tables are made from them): no table to hold here.
            if b != ASCII.cr, let base = buffer.baseAddress {
                // Eight bytes at a time while all eight pass (a word with a refused byte, or a tab, is left to the
                // byte loop), then byte by byte.
                let stop = min(end, last + 1)
                if inRequestLine {
                    while i + 8 <= stop, ASCII.allRequestLine(ASCII.word(base, i)) { i += 8 }
                    while i < end, i <= last, ASCII.isRequestLine(buffer[i]) { i += 1 }
                } else {
                    while i + 8 <= stop, ASCII.allFieldValue(ASCII.word(base, i)) { i += 8 }
                    while i < end, i <= last, ASCII.isFieldValue(buffer[i]) { i += 1 }
                }
            }
            if i > last {
                if inRequestLine { throw HTTPServerError(.uriTooLong, "The request line is too long.") }
                throw HTTPServerError(.headerFieldsTooLarge, "The header block is too large.")
            }
        }
        scanned = end
        return .needMore
    }

    private mutating func reset() {
        scanned = 0
        lineStart = 0
        requestLine = nil
        fieldCount = 0
    }
}
