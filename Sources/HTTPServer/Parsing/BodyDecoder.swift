/// An incremental decoder of one request body: Content-Length or chunked (RFC 9112 section 7.1), with chunk
/// extensions (validated, ignored) and trailer fields (validated, collected), and a size limit.
///
/// A pure value type with no I/O, driven by its connection on the shard queue. It never traps on any input.
public struct BodyDecoder: Sendable {
    private enum State: Sendable {
        case length(remaining: Int)
        case chunkSize(value: Int, digits: Int)
        case chunkExtension(length: Int)
        case chunkSizeLF
        case chunkData(remaining: Int)
        case chunkDataCR
        case chunkDataLF
        case trailerLine(length: Int, sawCR: Bool)
        case done
    }

    /// What one call to `next` found.
    public struct Piece: Sendable, Equatable {
        /// Bytes of the input that were used (framing and data).
        public var consumed: Int
        /// Body bytes found: a range of the input, or nil when the input held only framing or ended first.
        public var data: Range<Int>?
        /// Whether the body is complete.
        public var isComplete: Bool
    }

    private var state: State
    private var limit: Int
    private let trailerLimits: RequestParser.Limits
    private var received = 0
    /// A chunked body's trailer section as it arrives, and its fields once complete: nil until there are some, so
    /// that a decoder without them holds no reference to count (it is copied in and out of its request decoder's
    /// state on every read).
    private var trailerBytes: [UInt8]?
    private var trailerCount = 0
    private var trailerFields: HTTPHeaders?
    /// The trailer fields of a chunked body, once complete.
    public var trailers: HTTPHeaders { trailerFields ?? HTTPHeaders() }

    /// Creates a decoder for a framing, refusing bodies longer than `limit` bytes.
    public init(framing: RequestHead.Framing, limit: Int, trailerLimits: RequestParser.Limits = .init()) {
        switch framing {
        case .none: state = .done
        case .length(let n): state = .length(remaining: n)
        case .chunked: state = .chunkSize(value: 0, digits: 0)
        }
        self.limit = limit
        self.trailerLimits = trailerLimits
    }

    /// Whether the whole body has been decoded.
    public var isComplete: Bool {
        if case .done = state { return true }
        return false
    }

    /// The number of body bytes decoded so far.
    public var receivedCount: Int { received }

    /// Sets the size limit before any body byte is decoded; a declared length above it is refused at once (413).
    mutating func limit(to newLimit: Int) throws(HTTPServerError) {
        limit = newLimit
        if case .length(let n) = state, n > newLimit {
            throw HTTPServerError(.contentTooLarge, "The body is larger than \(newLimit) bytes.")
        }
    }

    /// The bytes a body of a declared length still has to come, or nil for a chunked body.
    var remainingLength: Int? {
        guard case .length(let remaining) = state else { return nil }
        return remaining
    }

    /// Decodes framing bytes of `input` until it finds body bytes, the end of the body, or the end of the input.
    public mutating func next(_ input: UnsafeBufferPointer<UInt8>) throws(HTTPServerError) -> Piece {
        var i = 0
        let n = input.count
        while i < n {
            switch state {
            case .done:
                return Piece(consumed: i, data: nil, isComplete: true)
            case .length(let remaining):
                let take = min(remaining, n - i)
                try account(take)
                state = remaining == take ? .done : .length(remaining: remaining - take)
                return Piece(consumed: i + take, data: i..<(i + take), isComplete: isComplete)
            case .chunkData(let remaining):
                let take = min(remaining, n - i)
                state = remaining == take ? .chunkDataCR : .chunkData(remaining: remaining - take)
                return Piece(consumed: i + take, data: i..<(i + take), isComplete: false)
            default:
                try step(input[i])
                i += 1
            }
        }
        return Piece(consumed: i, data: nil, isComplete: isComplete)
    }

    private mutating func account(_ count: Int) throws(HTTPServerError) {
        received += count
        guard received <= limit else {
            throw HTTPServerError(.contentTooLarge, "The body is larger than \(limit) bytes.")
        }
    }

    /// One byte of chunk framing.
    private mutating func step(_ b: UInt8) throws(HTTPServerError) {
        switch state {
        case .chunkSize(let value, let digits):
            if let h = ASCII.hexValue(b) {
                // 15 hex digits already exceed any limit we could accept; more would overflow.
                guard digits < 15 else { throw HTTPServerError(.badRequest, "The chunk size overflows.") }
                state = .chunkSize(value: value << 4 | h, digits: digits + 1)
            } else if digits > 0, b == ASCII.cr {
                state = .chunkSizeLF
                try beginChunk(value)
            } else if digits > 0, b == ASCII.semicolon || ASCII.isWhitespace(b) {
                try beginChunk(value)
                state = .chunkExtension(length: 1)
            } else {
                throw HTTPServerError(.badRequest, "A chunk size is not a hexadecimal number.")
            }
        case .chunkExtension(let length):
            if b == ASCII.cr {
                state = .chunkSizeLF
            } else {
                guard ASCII.fieldValue[Int(b)], length < 4096 else {
                    throw HTTPServerError(.badRequest, "A chunk extension is invalid or too long.")
                }
                state = .chunkExtension(length: length + 1)
            }
        case .chunkSizeLF:
            guard b == ASCII.lf else { throw HTTPServerError(.badRequest, "A chunk size line ends with a bare CR.") }
            state = pendingChunk == 0 ? .trailerLine(length: 0, sawCR: false) : .chunkData(remaining: pendingChunk)
        case .chunkDataCR:
            guard b == ASCII.cr else { throw HTTPServerError(.badRequest, "Chunk data is longer than its size.") }
            state = .chunkDataLF
        case .chunkDataLF:
            guard b == ASCII.lf else { throw HTTPServerError(.badRequest, "Chunk data ends with a bare CR.") }
            state = .chunkSize(value: 0, digits: 0)
        case .trailerLine(let length, let sawCR):
            try trailerByte(b, length: length, sawCR: sawCR)
        case .length, .chunkData, .done:
            break
        }
    }

    private var pendingChunk = 0

    private mutating func beginChunk(_ size: Int) throws(HTTPServerError) {
        try account(size)
        pendingChunk = size
    }

    private mutating func trailerByte(_ b: UInt8, length: Int, sawCR: Bool) throws(HTTPServerError) {
        if sawCR {
            guard b == ASCII.lf else { throw HTTPServerError(.badRequest, "A trailer line ends with a bare CR.") }
            if length == 0 {
                try finishTrailers()
                state = .done
            } else {
                trailerCount += 1
                guard trailerCount <= trailerLimits.maxHeaderCount else {
                    throw HTTPServerError(.headerFieldsTooLarge, "Too many trailer fields.")
                }
                trailerBytes?.append(ASCII.cr)  // a line ended: it had bytes, so the section exists
                trailerBytes?.append(ASCII.lf)
                state = .trailerLine(length: 0, sawCR: false)
            }
            return
        }
        if b == ASCII.cr {
            state = .trailerLine(length: length, sawCR: true)
            return
        }
        guard b != ASCII.lf else { throw HTTPServerError(.badRequest, "A trailer line ends with a bare LF.") }
        if trailerBytes == nil { trailerBytes = [] }
        trailerBytes!.append(b)
        guard trailerBytes!.count <= trailerLimits.maxHeaderBytes else {
            throw HTTPServerError(.headerFieldsTooLarge, "The trailer section is too large.")
        }
        state = .trailerLine(length: length + 1, sawCR: false)
    }

    private mutating func finishTrailers() throws(HTTPServerError) {
        guard let trailerBytes, !trailerBytes.isEmpty else { return }
        let fields = try trailerBytes.withUnsafeBufferPointer { (buffer) throws(HTTPServerError) in
            try RequestParser.fieldLines(buffer, 0..<buffer.count, count: trailerCount, valuesChecked: false)
        }
        trailerFields = fields
        self.trailerBytes = nil
    }
}
