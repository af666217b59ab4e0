import Testing

@testable import HTTPServer

/// Parses a literal request stream with the decoder the server serves through, whole and in pieces, and checks
/// that both agree.
private func parse(
    _ text: String,
    limits: RequestParser.Limits = .init(),
    bodyLimit: Int = 1 << 20
)
    -> RequestDecoder.DecodedStream
{
    let bytes = Array(text.utf8)
    let whole = RequestDecoder.decode(bytes, limits: limits, bodyLimit: bodyLimit)
    for piece in [1, 2, 3, 7] {
        let split = RequestDecoder.decode(bytes, pieceSize: piece, limits: limits, bodyLimit: bodyLimit)
        #expect(split == whole, "pieces of \(piece) bytes parse differently")
    }
    return whole
}

private func status(_ text: String, limits: RequestParser.Limits = .init(), bodyLimit: Int = 1 << 20) -> Int? {
    parse(text, limits: limits, bodyLimit: bodyLimit).error?.status
}

@Suite struct RequestParserTests {
    @Test func parsesRequestLineAndHeadersInOrder() throws {
        let result = parse("GET /a/b?x=1&y=2 HTTP/1.1\r\nHost: h\r\nX-One: 1\r\nx-two:  two words  \r\n\r\n")
        let request = try #require(result.requests.first)
        #expect(result.error == nil)
        #expect(request.head.method == .get)
        #expect(request.head.path == "/a/b")
        #expect(request.head.query == "x=1&y=2")
        #expect(request.head.headers["X-TWO"] == "two words")
        #expect(request.head.headers.map(\.name) == ["Host", "X-One", "x-two"])
        #expect(request.head.keepAlive)
        #expect(request.head.framing == .none)
    }

    @Test func parsesPipelinedRequestsInOrder() {
        let result = parse(
            "GET /1 HTTP/1.1\r\nHost: h\r\n\r\nPOST /2 HTTP/1.1\r\nHost: h\r\nContent-Length: 3\r\n\r\nabc"
                + "GET /3 HTTP/1.1\r\nHost: h\r\n\r\n"
        )
        #expect(result.requests.map(\.head.path) == ["/1", "/2", "/3"])
        #expect(result.requests[1].body == Array("abc".utf8))
    }

    @Test func ignoresEmptyLinesBeforeTheRequestLine() {
        #expect(parse("\r\n\r\nGET / HTTP/1.1\r\nHost: h\r\n\r\n").requests.count == 1)
    }

    @Test func keepsAnIncompleteRequestPending() {
        let result = parse("GET / HTTP/1.1\r\nHost: h\r\n")
        #expect(result.requests.isEmpty)
        #expect(result.error == nil)
        #expect(result.pendingBytes > 0)
    }

    @Test func decodesChunkedBodiesWithExtensionsAndTrailers() throws {
        let result = parse(
            "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n"
                + "4;name=value\r\nWiki\r\n5 ; a=\"q\"\r\npedia\r\nE\r\n in\r\n\r\nchunks.\r\n0\r\nExpires: never\r\n\r\n"
        )
        let request = try #require(result.requests.first)
        #expect(String(decoding: request.body, as: UTF8.self) == "Wikipedia in\r\n\r\nchunks.")
        #expect(request.trailers["expires"] == "never")
        #expect(request.head.framing == .chunked)
    }

    @Test func treatsTransferEncodingCaseInsensitively() {
        #expect(parse("POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: Chunked\r\n\r\n0\r\n\r\n").requests.count == 1)
    }

    @Test func rejectsContentLengthWithTransferEncoding() {
        #expect(
            status("POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n")
                == 400
        )
        #expect(
            status("POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\nContent-Length: 5\r\n\r\n0\r\n\r\n")
                == 400
        )
    }

    @Test(arguments: ["5, 5", "+5", "-1", "0x5", "5 5", "5.0", "", "99999999999999999999", "1_0"])
    func rejectsInvalidContentLength(_ value: String) {
        #expect(status("POST / HTTP/1.1\r\nHost: h\r\nContent-Length: \(value)\r\n\r\nhello") == 400)
    }

    @Test func rejectsDuplicateContentLength() {
        #expect(status("POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 5\r\nContent-Length: 5\r\n\r\nhello") == 400)
    }

    @Test(arguments: [
        "gzip, chunked", "chunked, chunked", "xchunked", "chunked;q=1", "identity", "\"chunked\"", "chunk",
    ])
    func rejectsUnknownOrObfuscatedTransferCodings(_ value: String) {
        #expect(status("POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: \(value)\r\n\r\n0\r\n\r\n") == 400)
    }

    @Test func rejectsTwoTransferEncodingFields() {
        #expect(
            status(
                "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n"
            )
                == 400
        )
    }

    @Test func rejectsTransferEncodingInHTTP10() {
        #expect(status("POST / HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n") == 400)
    }

    @Test func rejectsObsFold() {
        #expect(status("GET / HTTP/1.1\r\nHost: h\r\nX-A: a\r\n  folded\r\n\r\n") == 400)
        #expect(status("GET / HTTP/1.1\r\n Host: h\r\n\r\n") == 400)
    }

    @Test func rejectsWhitespaceBeforeTheColon() {
        #expect(status("GET / HTTP/1.1\r\nHost : h\r\n\r\n") == 400)
        #expect(status("GET / HTTP/1.1\r\nHost: h\r\nContent-Length\t: 0\r\n\r\n") == 400)
    }

    @Test(arguments: ["X A: 1", "X@A: 1", "X(A): 1", ": empty", "X\u{01}: 1", "Caf\u{e9}: 1", "NoColon"])
    func rejectsInvalidFieldNames(_ line: String) {
        #expect(status("GET / HTTP/1.1\r\nHost: h\r\n\(line)\r\n\r\n") == 400)
    }

    @Test(arguments: ["a\u{0}b", "a\u{7f}b", "a\u{01}b", "a\u{0b}b", "a\rb"])
    func rejectsInvalidCharactersInValues(_ value: String) {
        #expect(status("GET / HTTP/1.1\r\nHost: h\r\nX-A: \(value)\r\n\r\n") == 400)
    }

    @Test func acceptsObsTextInValues() {
        #expect(parse("GET / HTTP/1.1\r\nHost: h\r\nX-A: caf\u{e9}\r\n\r\n").requests.count == 1)
    }

    @Test func rejectsBareCRAndBareLF() {
        #expect(status("GET / HTTP/1.1\rHost: h\r\n\r\n") == 400)
        #expect(status("GET / HTTP/1.1\nHost: h\n\n") == 400)
        #expect(status("GET / HTTP/1.1\r\nHost: h\n\r\n") == 400)
        #expect(status("GET / HTTP/1.1\r\nHost: h\r\n\r\r\n") == 400)
    }

    @Test(arguments: ["zz", "", " 5", "0x5", "-5", "fffffffffffffffff", "5\u{0}"])
    func rejectsMalformedAndOverflowingChunkSizes(_ size: String) {
        #expect(
            status("POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n\(size)\r\nhello\r\n0\r\n\r\n")
                == 400
        )
    }

    @Test func rejectsChunkDataLongerThanItsSize() {
        #expect(
            status("POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nhello\r\n0\r\n\r\n") == 400
        )
    }

    @Test func rejectsBareLFInChunkFraming() {
        #expect(status("POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n5\nhello\r\n0\r\n\r\n") == 400)
        #expect(status("POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\n0\r\n\r\n") == 400)
    }

    @Test func rejectsInvalidTrailers() {
        #expect(
            status("POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n0\r\nBad Name: x\r\n\r\n") == 400
        )
    }

    @Test func answersTooLongRequestLinesWith414() {
        let limits = RequestParser.Limits(maxRequestLineLength: 64)
        #expect(status("GET /\(String(repeating: "a", count: 100)) HTTP/1.1\r\nHost: h\r\n\r\n", limits: limits) == 414)
        #expect(status("GET /\(String(repeating: "a", count: 100))", limits: limits) == 414)
    }

    @Test func answersTooLargeHeaderBlocksAndCountsWith431() {
        let big = RequestParser.Limits(maxHeaderBytes: 256)
        #expect(
            status("GET / HTTP/1.1\r\nHost: h\r\nX: \(String(repeating: "v", count: 300))\r\n\r\n", limits: big) == 431
        )
        let few = RequestParser.Limits(maxHeaderCount: 3)
        #expect(status("GET / HTTP/1.1\r\nHost: h\r\nA: 1\r\nB: 2\r\nC: 3\r\n\r\n", limits: few) == 431)
    }

    @Test func answersTooLargeBodiesWith413() {
        #expect(status("POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 11\r\n\r\nhello world", bodyLimit: 10) == 413)
        #expect(
            status(
                "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n6\r\nhello \r\n5\r\nworld\r\n0\r\n\r\n",
                bodyLimit: 10
            ) == 413
        )
    }

    @Test func answersOtherMajorVersionsWith505() {
        #expect(status("GET / HTTP/2.0\r\nHost: h\r\n\r\n") == 505)
        #expect(status("GET / HTTP/0.9\r\nHost: h\r\n\r\n") == 505)
    }

    @Test(arguments: [
        "GET / HTTP/1.1x", "GET / http/1.1", "GET / HTTP/1", "GET  / HTTP/1.1", "GET / HTTP/1.1 ", "GET /",
        "GET /a\u{01} HTTP/1.1", "GET /caf\u{e9} HTTP/1.1", "G(T / HTTP/1.1",
    ])
    func rejectsMalformedRequestLines(_ line: String) {
        #expect(status("\(line)\r\nHost: h\r\n\r\n") == 400)
    }

    @Test func answersUnknownMethodsWith501() {
        #expect(status("BREW / HTTP/1.1\r\nHost: h\r\n\r\n") == 501)
        #expect(status("get / HTTP/1.1\r\nHost: h\r\n\r\n") == 501)
    }

    @Test func requiresExactlyOneHostInHTTP11() {
        #expect(status("GET / HTTP/1.1\r\n\r\n") == 400)
        #expect(status("GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n") == 400)
        #expect(parse("GET / HTTP/1.0\r\n\r\n").requests.count == 1)
    }

    @Test(arguments: [
        "a, b", "a b", "a,b", "user@a", "a/b", "a\"b", "a:80:81", "a:8x", "[::1", "a%zz", "a%4", "a\\b", "a{b}",
    ])
    func rejectsHostValuesThatAreNotOneHost(_ value: String) {
        #expect(status("GET / HTTP/1.1\r\nHost: \(value)\r\n\r\n") == 400, "\(value)")
        #expect(status("GET / HTTP/1.0\r\nHost: \(value)\r\n\r\n") == 400, "\(value)")
    }

    @Test(arguments: [
        "", "example.com", "example.com:8080", "127.0.0.1:80", "[::1]", "[::1]:8080", "xn--caf-dma.example", "a%20b",
        "a.b-c_d~e", "localhost:",
    ])
    func acceptsHostValuesOfOneHostAndAPort(_ value: String) {
        #expect(parse("GET / HTTP/1.1\r\nHost: \(value)\r\n\r\n").requests.count == 1, "\(value)")
    }

    @Test func refusesNULAndControlBytesInTheHeadAtOnce() {
        // No line end follows: the verdict comes at the byte, not after the head deadline or a length limit.
        #expect(status("\u{0}\u{0}\u{0}") == 400)
        #expect(status("\u{16}\u{3}\u{1}\u{2}") == 400)  // the start of a TLS ClientHello
        #expect(status("GET /\u{0}") == 400)
        #expect(status("GET / HTTP/1.1\r\nHost: h\r\nX: a\u{0}") == 400)
        #expect(status("GET / HTTP/1.1\r\nHost: h\r\nX: a\u{7f}") == 400)
        #expect(status("GET / HTTP/1.1\r\nHost: h\r\nX: caf\u{e9}") == nil)
    }

    @Test func recognisesExpectContinueAndRejectsOtherExpectations() throws {
        let result = parse("POST / HTTP/1.1\r\nHost: h\r\nExpect: 100-Continue\r\nContent-Length: 1\r\n\r\nx")
        #expect(try #require(result.requests.first).head.expectsContinue)
        #expect(status("GET / HTTP/1.1\r\nHost: h\r\nExpect: something\r\n\r\n") == 417)
    }

    @Test func decidesKeepAliveFromVersionAndConnection() {
        let cases: [(String, Bool)] = [
            ("GET / HTTP/1.1\r\nHost: h\r\n\r\n", true),
            ("GET / HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n", false),
            ("GET / HTTP/1.1\r\nHost: h\r\nConnection: Upgrade, CLOSE\r\n\r\n", false),
            ("GET / HTTP/1.0\r\n\r\n", false),
            ("GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n", true),
        ]
        for (text, keepAlive) in cases {
            #expect(parse(text).requests.first?.head.keepAlive == keepAlive, "\(text)")
        }
    }

    @Test func splitsOriginFormTargetsAtTheFirstQuestionMark() throws {
        let cases: [(target: String, path: String, query: String?)] = [
            ("/", "/", nil), ("/a/b", "/a/b", nil), ("/a?", "/a", ""), ("/a??b=?", "/a", "?b=?"),
            ("/?x", "/", "x"), ("/a%3Fb?c", "/a%3Fb", "c"),
        ]
        for (target, path, query) in cases {
            let head = try #require(parse("GET \(target) HTTP/1.1\r\nHost: h\r\n\r\n").requests.first?.head)
            #expect(head.path == path, "\(target)")
            #expect(head.query == query, "\(target)")
        }
    }

    @Test func takesThePathFromAbsoluteFormTargets() throws {
        let result = parse("GET http://example.com/x/y?z=1 HTTP/1.1\r\nHost: example.com\r\n\r\n")
        let head = try #require(result.requests.first?.head)
        #expect(head.path == "/x/y")
        #expect(head.query == "z=1")
        #expect(status("GET ftp://x/ HTTP/1.1\r\nHost: h\r\n\r\n") == 400)
        #expect(status("GET * HTTP/1.1\r\nHost: h\r\n\r\n") == 400)
        #expect(parse("OPTIONS * HTTP/1.1\r\nHost: h\r\n\r\n").requests.count == 1)
    }

    @Test func neverTrapsOnArbitraryBytes() {
        var generator = SplitMix64(seed: 42)
        let alphabet = Array(
            "GET POST / HTTP/1.1\r\n:;,=\t 0123456789abcdefHost Content-Length Transfer-Encoding chunked".utf8
        )
        for round in 0..<2000 {
            let count = Int(generator.next() % 200)
            var bytes: [UInt8] = []
            for _ in 0..<count {
                let r = generator.next()
                bytes.append(r % 4 == 0 ? UInt8(truncatingIfNeeded: r >> 8) : alphabet[Int(r >> 8) % alphabet.count])
            }
            if round % 2 == 0 { bytes = Array("POST / HTTP/1.1\r\nHost: h\r\n".utf8) + bytes }
            _ = RequestDecoder.decode(bytes, pieceSize: 1 + round % 5, bodyLimit: 100)
        }
    }
}

/// A small deterministic generator for the no-trap test.
struct SplitMix64: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// The head's scan runs over ordinary bytes without its tables (`RequestParser.parseHead`): every byte a request line
/// or a field value may hold gets the tables' verdict there, before and after a run of ordinary bytes, and wherever
/// a read ends.
@Suite struct RequestParserByteClassTests {
    static let refusal = "The head holds a byte no request line or field may hold."

    /// The refusal the head's scan gives for `head`, read whole and in pieces of 1, 2, 3 and 7 bytes.
    private static func scanRefusal(_ head: [UInt8]) -> Bool? {
        let verdicts = [head.count, 1, 2, 3, 7].map { piece in
            RequestDecoder.decode(head, pieceSize: piece).error?.message == refusal
        }
        return Set(verdicts).count == 1 ? verdicts[0] : nil
    }

    /// The byte classes themselves, by RFC 9112 and 9110: HTAB and obs-text in a field value only, DEL and the other
    /// controls nowhere.
    @Test func theByteClassesAreTheRFCs() {
        for byte in UInt8.min...UInt8.max {
            let visible = byte >= 0x21 && byte <= 0x7E
            #expect(ASCII.isRequestLine(byte) == (visible || byte == 0x20), "request line, byte \(byte)")
            #expect(
                ASCII.isFieldValue(byte) == (visible || byte == 0x20 || byte == 0x09 || byte >= 0x80),
                "field value, byte \(byte)"
            )
            #expect(ASCII.requestLine[Int(byte)] == ASCII.isRequestLine(byte))
            #expect(ASCII.fieldValue[Int(byte)] == ASCII.isFieldValue(byte))
        }
    }

    @Test func everyByteOfARequestLineGetsTheTablesVerdict() {
        for byte in UInt8.min...UInt8.max where byte != ASCII.cr && byte != ASCII.lf {
            let head = Array("GET /abcdefgh".utf8) + [byte] + Array("ijk HTTP/1.1\r\nHost: h\r\n\r\n".utf8)
            #expect(Self.scanRefusal(head) == !ASCII.requestLine[Int(byte)], "byte \(byte)")
        }
    }

    @Test func everyByteOfAFieldValueGetsTheTablesVerdict() {
        for byte in UInt8.min...UInt8.max where byte != ASCII.cr && byte != ASCII.lf {
            let head = Array("GET / HTTP/1.1\r\nHost: h\r\nX-Note: abcdefgh".utf8) + [byte] + Array("ijk\r\n\r\n".utf8)
            #expect(Self.scanRefusal(head) == !ASCII.fieldValue[Int(byte)], "byte \(byte)")
        }
    }

    /// Read a byte at a time, the scan judges every byte alone; read whole, it runs over ordinary ones: the same
    /// verdict at every length around the limits.
    @Test func theLimitsHoldWhereverARunOfOrdinaryBytesEnds() {
        let limits = RequestParser.Limits(maxRequestLineLength: 20, maxHeaderBytes: 60)
        var heads = (10...30).map { "GET /" + String(repeating: "a", count: $0) + " HTTP/1.1\r\nHost: h\r\n\r\n" }
        heads += (20...50).map {
            "GET / HTTP/1.1\r\nHost: h\r\nX-Note: " + String(repeating: "b", count: $0) + "\r\n\r\n"
        }
        var statuses: Set<Int?> = []
        for head in heads {
            let whole = RequestDecoder.decode(Array(head.utf8), limits: limits)
            let bytewise = RequestDecoder.decode(Array(head.utf8), pieceSize: 1, limits: limits)
            #expect(whole == bytewise, "\(head.utf8.count) bytes")
            statuses.insert(whole.error?.status)
        }
        #expect(statuses == [nil, 414, 431])
    }
}
