import Testing

@testable import HTTPServer

/// Decodes a literal stream with a router-like policy, whole and in 1-, 2-, 3- and 7-byte pieces, and checks that
/// every split gives the same result.
private func decode(
    _ text: String,
    policy: @escaping (RequestHead) -> RequestDecoder.BodyPolicy
) -> RequestDecoder.DecodedStream {
    let bytes = Array(text.utf8)
    let whole = RequestDecoder.decode(bytes, policy: policy)
    for piece in [1, 2, 3, 7] {
        #expect(RequestDecoder.decode(bytes, pieceSize: piece, policy: policy) == whole, "pieces of \(piece) bytes")
    }
    return whole
}

/// Reads bodies under `/small` up to 4 bytes, discards bodies under `/gone` up to 8 bytes, reads others up to 1 MiB.
private func route(_ head: RequestHead) -> RequestDecoder.BodyPolicy {
    switch head.path {
    case "/small": .read(limit: 4)
    case "/gone": .discard(limit: 8)
    default: .read(limit: 1 << 20)
    }
}

@Suite struct RequestDecoderTests {
    @Test func refusesADeclaredLengthAboveTheRouteLimitAtTheHead() {
        // The body never arrives: the verdict comes with the head, as the server answers before reading it.
        let result = decode("POST /small HTTP/1.1\r\nHost: h\r\nContent-Length: 5\r\n\r\n", policy: route)
        #expect(result.error?.status == 413)
        #expect(result.requests.isEmpty)
    }

    @Test func refusesAChunkedBodyOnceItGrowsAboveTheRouteLimit() {
        let chunked = "POST /small HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n"
        #expect(decode(chunked + "4\r\nabcd\r\n0\r\n\r\n", policy: route).requests.first?.body == Array("abcd".utf8))
        #expect(decode(chunked + "4\r\nabcd\r\n1\r\n", policy: route).error?.status == 413)
    }

    @Test func discardsTheBodyOfAnEarlyAnswerAndGoesOnWithTheNextRequest() {
        let result = decode(
            "POST /gone HTTP/1.1\r\nHost: h\r\nContent-Length: 5\r\n\r\nhello"
                + "POST /gone HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\nX: y\r\n\r\n"
                + "GET /next HTTP/1.1\r\nHost: h\r\n\r\n",
            policy: route
        )
        #expect(result.error == nil)
        #expect(result.requests.map(\.head.path) == ["/gone", "/gone", "/next"])
        #expect(result.requests.allSatisfy { $0.body.isEmpty })
        #expect(result.requests[1].trailers["x"] == "y")
    }

    @Test func refusesABodyTooLargeToDiscard() {
        let declared = decode("POST /gone HTTP/1.1\r\nHost: h\r\nContent-Length: 9\r\n\r\n", policy: route)
        #expect(declared.error?.status == 413)
        let chunked = decode(
            "POST /gone HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n9\r\n",
            policy: route
        )
        #expect(chunked.error?.status == 413)
    }

    @Test func asksForContinueOnlyWhenTheBodyIsAccepted() {
        let expect = "Host: h\r\nExpect: 100-continue\r\nContent-Length: 3\r\n\r\nabc"
        #expect(decode("POST /a HTTP/1.1\r\n\(expect)", policy: route).requests.first?.continueRequested == true)
        #expect(decode("POST /gone HTTP/1.1\r\n\(expect)", policy: route).requests.first?.continueRequested == false)
        let tooLarge = "POST /small HTTP/1.1\r\n\(expect.replacing("3", with: "5"))"
        #expect(decode(tooLarge, policy: route).error?.status == 413)
        let plain = "POST /a HTTP/1.1\r\nHost: h\r\nContent-Length: 3\r\n\r\nabc"
        #expect(decode(plain, policy: route).requests.first?.continueRequested == false)
    }

    @Test func reportsBodyBytesAsRangesOfTheBufferItWasGiven() throws {
        var decoder = RequestDecoder()
        let bytes = Array("POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 3\r\n\r\nabcGET".utf8)
        try bytes.withUnsafeBufferPointer { (buffer) throws(HTTPServerError) in
            let head = try decoder.decode(buffer)
            guard case .head = head.part else {
                Issue.record("no head")
                return
            }
            #expect(try decoder.readBody(limit: 3) == false)
            let rest = UnsafeBufferPointer(rebasing: buffer[head.consumed...])
            let body = try decoder.decode(rest)
            #expect(body == .init(part: .body(0..<3), consumed: 3))
            let end = try decoder.decode(UnsafeBufferPointer(rebasing: rest[3...]))
            #expect(end == .init(part: .end(trailers: HTTPHeaders()), consumed: 0))
            #expect(try decoder.decode(UnsafeBufferPointer(rebasing: rest[3...])).part == nil)
        }
    }

    /// The server's way for a body that came with its head: taken whole when all its bytes are there, never when a
    /// byte is missing, for a chunked body, or for one being discarded; the next head decodes after it.
    @Test func takesAWholeBodyOfADeclaredLengthOnlyWhenAllOfItIsThere() throws {
        let text = "POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 3\r\n\r\nabcGET / HTTP/1.1\r\nHost: h\r\n\r\n"
        let bytes = Array(text.utf8)
        try bytes.withUnsafeBufferPointer { (buffer) throws(HTTPServerError) in
            var decoder = RequestDecoder()
            let head = try decoder.decode(buffer)
            #expect(decoder.takeWholeBody(limit: 3, available: 2) == nil)  // a byte short: nothing changes
            #expect(decoder.takeWholeBody(limit: 2, available: 100) == nil)  // above the limit: `readBody`'s 413
            #expect(decoder.takeWholeBody(limit: 3, available: buffer.count - head.consumed) == 3)
            let next = try decoder.decode(UnsafeBufferPointer(rebasing: buffer[(head.consumed + 3)...]))
            guard case .head(let get) = next.part else {
                Issue.record("the next request's head")
                return
            }
            #expect(get.method == .get && decoder.takeWholeBody(limit: 100, available: 100) == nil)
        }
        let chunked = Array(
            "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n".utf8
        )
        try chunked.withUnsafeBufferPointer { (buffer) throws(HTTPServerError) in
            var decoder = RequestDecoder()
            _ = try decoder.decode(buffer)
            #expect(decoder.takeWholeBody(limit: 100, available: 100) == nil)
        }
        try bytes.withUnsafeBufferPointer { (buffer) throws(HTTPServerError) in
            var decoder = RequestDecoder()
            _ = try decoder.decode(buffer)
            try decoder.discardBody(limit: 100)
            #expect(decoder.takeWholeBody(limit: 100, available: 100) == nil)
        }
    }

    @Test func throwsTheSameErrorAgainOnceItFailed() {
        var decoder = RequestDecoder()
        let bytes = Array("GET / HTTP/1.1\nHost: h\r\n\r\n".utf8)
        bytes.withUnsafeBufferPointer { buffer in
            let first = #expect(throws: HTTPServerError.self) { try decoder.decode(buffer) }
            let second = #expect(throws: HTTPServerError.self) { try decoder.decode(buffer) }
            #expect(first == second)
        }
    }

    @Test(arguments: ["a, b", "a,b", "a b", "a\tb", "a<b>", "a/b", "user@a", "a\"b"])
    func refusesAHostThatIsAListOrHoldsASpaceOrABadByte(_ value: String) {
        let result = decode("GET / HTTP/1.1\r\nHost: \(value)\r\n\r\nGET / HTTP/1.1\r\nHost: h\r\n\r\n", policy: route)
        #expect(result.error?.status == 400, "\(value)")
        #expect(result.requests.isEmpty)
    }

    @Test func refusesNULBytesAtTheFirstOneNotAtTheHeadDeadline() {
        let nuls = String(repeating: "\u{0}", count: 4096)
        #expect(decode(nuls, policy: route).error?.status == 400)
        // One byte is enough for the verdict: the server answers without waiting for more.
        var decoder = RequestDecoder()
        let error = [UInt8(0)].withUnsafeBufferPointer { buffer in
            #expect(throws: HTTPServerError.self) { try decoder.decode(buffer) }
        }
        #expect(error?.status == 400)
    }

    @Test func aHeadWithoutABodyIsAWholeMessage() throws {
        var decoder = RequestDecoder()
        let bytes = Array("GET / HTTP/1.1\r\nHost: h\r\n\r\n".utf8)
        try bytes.withUnsafeBufferPointer { (buffer) throws(HTTPServerError) in
            let step = try decoder.decode(buffer)
            #expect(step.consumed == bytes.count)
            #expect(try decoder.decode(UnsafeBufferPointer(rebasing: buffer[step.consumed...])).part == nil)
        }
    }
}
