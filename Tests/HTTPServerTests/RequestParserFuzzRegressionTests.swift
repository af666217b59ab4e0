import Testing

@testable import HTTPServer

/// Inputs the libFuzzer target (Fuzz/ParserFuzzer.swift) found, kept as literals so they stay fixed.
@Suite struct RequestParserFuzzRegressionTests {
    /// Found by the fuzzer: a request line at the length limit ending in a bare CR (`\r` then `S`). Fed whole, the
    /// parser saw the CR's successor and answered 400; fed one byte at a time, the CR came last in a read, its
    /// check was deferred and the length check answered 414 first. The verdict must not depend on read boundaries.
    /// (Since bytes outside visible ASCII are refused as they arrive, the 0xF6 early in the line decides: 400.)
    @Test func bareCROnALongRequestLineGetsTheSameVerdictWholeAndInPieces() {
        let input: [UInt8] = [
            0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x48, 0x54, 0x54, 0x50, 0x20, 0xF6, 0xF6, 0xF6, 0xF6, 0xF6,
            0xF6, 0xF6, 0xF6, 0xF6, 0xF6, 0x55, 0x6E, 0x73, 0x61, 0x66, 0x65, 0x42, 0x75, 0xF6, 0xF6, 0xF6, 0xF6,
            0xFF, 0xFF, 0xFF, 0xFF, 0xF6, 0xF6, 0xF6, 0xF6, 0xDC, 0xF6, 0xF6, 0x25, 0x6F, 0x73, 0x74, 0x3A, 0x20,
            0xF6, 0xF6, 0xF6, 0x20, 0x2F, 0x31, 0x20, 0x48, 0x54, 0x54, 0x50, 0x2F, 0x31, 0x2E, 0x31, 0x0D, 0x53,
        ]
        let limits = RequestParser.Limits(maxRequestLineLength: 64, maxHeaderBytes: 512, maxHeaderCount: 8)
        let whole = RequestDecoder.decode(input, limits: limits, bodyLimit: 256)
        #expect(whole.error?.status == 400)
        for piece in 1...8 {
            #expect(RequestDecoder.decode(input, pieceSize: piece, limits: limits, bodyLimit: 256) == whole)
        }
    }

    /// Where the check now sits: a bare CR inside the fields is refused with 400 when the byte after it arrives,
    /// whether that byte comes in the same read or a later one.
    @Test func bareCRIsJudgedAtTheNextByteWhateverTheReads() {
        let input = Array("GET / HTTP/1.1\r\nHost: h\rX: y\r\n\r\n".utf8)
        let whole = RequestDecoder.decode(input)
        #expect(whole.error?.status == 400)
        for piece in 1...8 {
            #expect(RequestDecoder.decode(input, pieceSize: piece) == whole)
        }
    }
}
