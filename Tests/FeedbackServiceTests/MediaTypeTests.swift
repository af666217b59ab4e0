import Testing

@testable import FeedbackService

/// Which `Content-Type` values a posted body may carry: JSON in any case, with parameters and spaces.
@Suite struct MediaTypeTests {
    @Test(arguments: [
        "application/json", "Application/JSON", "application/json; charset=utf-8", "  application/json\t;q=1",
        "application/vnd.api+json", "APPLICATION/PROBLEM+JSON; x=y",
    ])
    func acceptsJSON(_ value: String) {
        #expect(SessionService.isJSONMediaType(value))
    }

    @Test(arguments: [
        "", "text/json", "application/jsonx", "application/xjson", "application/", "application/+json",
        "json", "text/plain; type=application/json", "application/x-www-form-urlencoded",
    ])
    func refusesOtherTypes(_ value: String) {
        #expect(!SessionService.isJSONMediaType(value))
    }

    /// Sixteen bytes are compared as two words first, letters folded by their 0x20 bit: each byte of
    /// `application/json`, replaced by every other byte value, is refused unless it is the same letter in the other
    /// case (the `/` only as itself), and the word test agrees with the byte-by-byte one on all of them.
    @Test func aSixteenByteValueIsJudgedByteForByte() {
        let json = Array("application/json".utf8)
        for place in json.indices {
            for value in 0...255 where value != Int(json[place]) {
                var bytes = json
                bytes[place] = UInt8(value)
                let sameLetter = json[place] != UInt8(ascii: "/") && UInt8(value) | 0x20 == json[place]
                let accepted = bytes.withUnsafeBufferPointer { SessionService.isJSONMediaType(ArraySlice($0)) }
                #expect(accepted == sameLetter, "byte \(value) at \(place)")
            }
        }
    }
}
