/// The one HTTP/1.1 request decoder: fed the bytes of a connection, it returns what it found in them, one part at a
/// time: a validated head, body bytes, or the end of a message with its trailers. The server serves through it, and
/// the parser tests and the fuzzer drive the same value (`RequestDecoder+Stream.swift`).
///
/// After a head with a body, the caller says what becomes of the body once the route is known: `readBody(limit:)`
/// (body parts follow, up to the route's limit) or `discardBody(limit:)` (the answer went out without it; its bytes
/// are consumed and not reported). Without either call the body is read up to the limit given at `init`.
///
/// A pure value type with no I/O: the connection that owns it calls it on its shard queue. The caller keeps the bytes
/// not yet consumed at the front of its buffer and passes them again with whatever arrived since; the verdict never
/// depends on where a read ended. Once it throws, it throws the same error again. It never traps, whatever the input.
public struct RequestDecoder: Sendable {
    /// One thing found in the input.
    public enum Part: Sendable, Equatable {
        /// A validated head. When its framing is `.none` it is a whole message: no body or end follows.
        case head(RequestHead)
        /// Body bytes: a range of the buffer passed to this call of `decode` (valid only for that buffer).
        case body(Range<Int>)
        /// The end of a message that had a body, with the trailer fields of a chunked body (else empty).
        case end(trailers: HTTPHeaders)
    }

    /// The result of one call to `decode`: what was found, and how many bytes of the buffer it took.
    public struct Step: Sendable, Equatable {
        /// The part found, or nil when the buffer holds no complete part yet.
        public var part: Part?
        /// Bytes to drop from the front of the buffer before the next call.
        public var consumed: Int
    }

    private enum State: Sendable {
        case head
        case body(Body)
        case failed(HTTPServerError)
    }

    /// A body being read: a struct, not a tuple, so that copying the state is the compiler's own code rather than the
    /// runtime's generic copy of a tuple.
    private struct Body: Sendable {
        var decoder: BodyDecoder
        var discard: Bool
    }

    /// The head limits in force (and the trailer limits of chunked bodies).
    public let limits: RequestParser.Limits
    /// The body limit that applies when the caller does not set one.
    public let defaultBodyLimit: Int
    private var parser: RequestParser
    private var state = State.head
    private var continueExpected = false

    /// Creates a decoder with head limits and the body limit used unless `readBody(limit:)` sets another.
    public init(limits: RequestParser.Limits = .init(), bodyLimit: Int = 1 << 20) {
        self.limits = limits
        self.defaultBodyLimit = bodyLimit
        self.parser = RequestParser(limits: limits)
    }

    /// Finds the next part in `buffer`, which starts with the first byte not yet consumed.
    public mutating func decode(_ buffer: UnsafeBufferPointer<UInt8>) throws(HTTPServerError) -> Step {
        switch state {
        case .head:
            let result: RequestParser.HeadResult
            do throws(HTTPServerError) {
                result = try parser.parseHead(buffer)
            } catch {
                state = .failed(error)
                throw error
            }
            guard case .head(let head, let consumed) = result else { return Step(part: nil, consumed: 0) }
            if head.framing != .none {
                state = .body(
                    Body(
                        decoder: BodyDecoder(framing: head.framing, limit: defaultBodyLimit, trailerLimits: limits),
                        discard: false
                    )
                )
                continueExpected = head.expectsContinue
            }
            return Step(part: .head(head), consumed: consumed)
        case .body(let current):
            var body = current.decoder
            let discard = current.discard
            state = .head  // owns `body` meanwhile (no copy on write); every way out below sets the state again
            var consumed = 0
            while true {
                let piece: BodyDecoder.Piece
                do throws(HTTPServerError) {
                    piece = try body.next(UnsafeBufferPointer(rebasing: buffer[consumed...]))
                } catch {
                    state = .failed(error)
                    throw error
                }
                let start = consumed
                consumed += piece.consumed
                if piece.isComplete, piece.data == nil || discard {
                    state = .head
                    return Step(part: .end(trailers: body.trailers), consumed: consumed)
                }
                if let data = piece.data, !discard {
                    state = .body(Body(decoder: body, discard: false))
                    return Step(part: .body((start + data.lowerBound)..<(start + data.upperBound)), consumed: consumed)
                }
                guard consumed < buffer.count else {
                    state = .body(Body(decoder: body, discard: discard))
                    return Step(part: nil, consumed: consumed)
                }
            }
        case .failed(let error):
            throw error
        }
    }

    /// The head just decoded has a body of a declared length, within `limit`, whose bytes are all among the
    /// `available` next ones: it is taken whole (read, as `readBody(limit:)` would, with no `100 Continue`: the body
    /// is there), the decoder waits for the next head, and its length is returned; nil, with nothing changed,
    /// otherwise (`readBody` or `discardBody` then). The server hands the request its body at once, without three
    /// decode steps and a request held while the body arrives.
    mutating func takeWholeBody(limit: Int, available: Int) -> Int? {
        guard case .body(let body) = state, !body.discard, let length = body.decoder.remainingLength,
            length <= available, length <= limit
        else { return nil }
        state = .head
        continueExpected = false
        return length
    }

    /// The route of the head just decoded takes its body, up to `limit` bytes: a declared length beyond is refused
    /// now (413), a chunked body when it grows beyond. Returns whether to send `100 Continue` (the client asked and
    /// the body is accepted); the shell may leave it out when body bytes arrived already.
    public mutating func readBody(limit: Int) throws(HTTPServerError) -> Bool {
        try setBody(limit: limit, discard: false)
        defer { continueExpected = false }
        return continueExpected
    }

    /// The head just decoded was answered without its body (404, 405): the body is read to be thrown away, up to
    /// `limit` bytes (413 beyond, the connection cannot be kept), and only its end is reported.
    public mutating func discardBody(limit: Int) throws(HTTPServerError) {
        continueExpected = false
        try setBody(limit: limit, discard: true)
    }

    private mutating func setBody(limit: Int, discard: Bool) throws(HTTPServerError) {
        guard case .body(var body) = state else { return }
        state = .head  // owns `body` meanwhile (no copy on write)
        do throws(HTTPServerError) {
            try body.decoder.limit(to: limit)
        } catch {
            state = .failed(error)
            throw error
        }
        body.discard = discard
        state = .body(body)
    }
}
