extension RequestParser {
    /// One request of a byte stream: its head, body and trailers.
    public struct ParsedRequest: Sendable, Equatable {
        /// The validated head.
        public var head: RequestHead
        /// The decoded body.
        public var body: [UInt8]
        /// Trailer fields of a chunked body.
        public var trailers: HTTPHeaders
    }

    /// What a byte stream holds: the complete requests in order, then the error that stopped parsing, if any.
    public struct ParsedStream: Sendable, Equatable {
        /// Complete requests, in order.
        public var requests: [ParsedRequest]
        /// The error that ended the stream, if one did.
        public var error: HTTPServerError?
        /// Bytes left over after the last complete request (an incomplete request), when no error occurred.
        public var pendingBytes: Int
    }

    /// Parses a whole byte stream (pipelined requests) fed in pieces of `pieceSize` bytes, as a connection would.
    /// Total: never traps on any input; the entry point for fuzzing and for tests.
    public static func parse(
        _ bytes: [UInt8],
        pieceSize: Int = .max,
        limits: Limits = Limits(),
        bodyLimit: Int = 1 << 20
    ) -> ParsedStream {
        var result = ParsedStream(requests: [], error: nil, pendingBytes: 0)
        var parser = RequestParser(limits: limits)
        var buffer: [UInt8] = []
        var offset = 0
        var current: (head: RequestHead, decoder: BodyDecoder, body: [UInt8])?
        let step = max(1, pieceSize)
        do throws(HTTPServerError) {
            while offset < bytes.count || !buffer.isEmpty {
                let before = buffer.count
                if offset < bytes.count {
                    let take = min(step, bytes.count - offset)
                    buffer.append(contentsOf: bytes[offset..<(offset + take)])
                    offset += take
                }
                // Consume as much of the buffer as possible.
                while !buffer.isEmpty {
                    if var request = current {
                        let progress = try buffer.withUnsafeBufferPointer { (b) throws(HTTPServerError) in
                            try request.decoder.decode(b, into: &request.body)
                        }
                        buffer.removeFirst(progress.consumed)
                        if progress.isComplete {
                            result.requests.append(
                                ParsedRequest(
                                    head: request.head,
                                    body: request.body,
                                    trailers: request.decoder.trailers
                                )
                            )
                            current = nil
                        } else {
                            current = request
                            break
                        }
                    } else {
                        let outcome = try buffer.withUnsafeBufferPointer { (b) throws(HTTPServerError) in
                            try parser.parseHead(b)
                        }
                        guard case .head(let head, let consumed) = outcome else { break }
                        buffer.removeFirst(consumed)
                        let decoder = BodyDecoder(framing: head.framing, limit: bodyLimit, trailerLimits: limits)
                        if decoder.isComplete {
                            result.requests.append(ParsedRequest(head: head, body: [], trailers: HTTPHeaders()))
                        } else {
                            current = (head, decoder, [])
                        }
                    }
                }
                if offset >= bytes.count, buffer.count == before || buffer.isEmpty { break }
            }
        } catch {
            result.error = error
            return result
        }
        result.pendingBytes = buffer.count
        return result
    }
}
