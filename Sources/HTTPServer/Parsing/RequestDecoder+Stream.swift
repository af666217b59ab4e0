extension RequestDecoder {
    /// What becomes of a request's body once its head is known, as a route would decide.
    public enum BodyPolicy: Sendable, Equatable {
        /// `readBody(limit:)`.
        case read(limit: Int)
        /// `discardBody(limit:)`.
        case discard(limit: Int)
    }

    /// One request of a byte stream: its head, body and trailers.
    public struct DecodedRequest: Sendable, Equatable {
        /// The validated head.
        public var head: RequestHead
        /// The body (empty when it was discarded).
        public var body: [UInt8]
        /// Trailer fields of a chunked body.
        public var trailers: HTTPHeaders
        /// Whether the decoder said to send `100 Continue`.
        public var continueRequested: Bool
    }

    /// What a byte stream holds: the complete requests in order, then the error that stopped decoding, if any.
    public struct DecodedStream: Sendable, Equatable {
        /// Complete requests, in order.
        public var requests: [DecodedRequest]
        /// The error that ended the stream, if one did.
        public var error: HTTPServerError?
        /// Bytes left over after the last complete request (an incomplete request), when no error occurred.
        public var pendingBytes: Int
    }

    /// Feeds a whole byte stream (pipelined requests) to one decoder in pieces of `pieceSize` bytes, as a connection
    /// receives them, keeping unconsumed bytes at the front of the buffer as `Shard` does, and collects its parts.
    /// `policy` plays the router (by default every body is read up to `bodyLimit`). Total: never traps on any input; the entry point of the parser tests and the fuzzer.
    public static func decode(
        _ bytes: [UInt8],
        pieceSize: Int = .max,
        limits: RequestParser.Limits = .init(),
        bodyLimit: Int = 1 << 20,
        policy: ((RequestHead) -> BodyPolicy)? = nil
    ) -> DecodedStream {
        var result = DecodedStream(requests: [], error: nil, pendingBytes: 0)
        var decoder = RequestDecoder(limits: limits, bodyLimit: bodyLimit)
        var buffer: [UInt8] = []
        var current: DecodedRequest?
        var offset = 0
        let step = max(1, pieceSize)
        do throws(HTTPServerError) {
            repeat {
                let take = min(step, bytes.count - offset)
                buffer.append(contentsOf: bytes[offset..<(offset + take)])
                offset += take
                while true {
                    let found = try buffer.withUnsafeBufferPointer { (b) throws(HTTPServerError) in
                        try decoder.decode(b)
                    }
                    switch found.part {
                    case nil:
                        break
                    case .head(let head):
                        var request = DecodedRequest(head: head, body: [], trailers: .init(), continueRequested: false)
                        switch head.framing == .none ? nil : policy?(head) ?? .read(limit: bodyLimit) {
                        case .read(let limit): request.continueRequested = try decoder.readBody(limit: limit)
                        case .discard(let limit): try decoder.discardBody(limit: limit)
                        case nil: break
                        }
                        if head.framing == .none { result.requests.append(request) } else { current = request }
                    case .body(let range):
                        current?.body.append(contentsOf: buffer[range])
                    case .end(let trailers):
                        current?.trailers = trailers
                        if let request = current { result.requests.append(request) }
                        current = nil
                    }
                    buffer.removeFirst(found.consumed)
                    if found.part == nil { break }
                }
            } while offset < bytes.count
        } catch {
            result.error = error
            return result
        }
        result.pendingBytes = buffer.count
        return result
    }
}
