import Foundation
import Testing

@testable import FeedbackJSON

/// The strict JSON parser behind every request body: what it accepts agrees with Foundation, what it refuses it
/// explains with a place.
struct JSONParserTests {
    private func parse(_ text: String) throws(JSONSyntaxError) -> JSONValue {
        try JSONValue(parsing: Array(text.utf8))
    }

    /// The same document read by Foundation's JSONDecoder through JSONValue's `Decodable` conformance.
    private func foundation(_ text: String) throws -> JSONValue {
        try JSONDecoder().decode(JSONValue.self, from: Data(text.utf8))
    }

    @Test(arguments: [
        #"{"type":"add","amount":5}"#,
        #"  [1, -2, 3.5, -0.25e-3, 1.25E1, 0, true, false, null, "x"]  "#,
        #"{"nested":{"a":[{"b":[[]]},{}]},"empty":""}"#,
        #""escapes: \" \\ \/ \b \f \n \r \t \u00e9 \ud83d\ude00""#,
        #"{"unicode":"grüße, 日本, 🎉"}"#,
        #"9223372036854775807"#,
        #"-9223372036854775808"#,
        "\t\r\n {\"a\" : 1 } \n",
    ])
    func validDocumentsParseAsJSONDecoderReadsThem(text: String) throws {
        #expect(try parse(text) == foundation(text))
    }

    @Test func integersStayIntegersAndOthersBecomeDoubles() throws {
        #expect(try parse("42") == .int(42))
        #expect(try parse("-0") == .int(0))
        #expect(try parse("4.0") == .double(4))
        #expect(try parse("1e2") == .double(100))
        #expect(try parse("9223372036854775808") == .double(9_223_372_036_854_775_808))
    }

    @Test(arguments: [
        ("", 1, 1, "ends where a value should start"),
        ("{\"type\":}", 1, 9, "expected a value"),
        ("{\"a\":1,}", 1, 8, "expected a member name"),
        ("[1 2]", 1, 4, "expected ',' or ']'"),
        ("{\"a\" 1}", 1, 6, "expected ':'"),
        ("{\"a\":1\n\"b\":2}", 2, 1, "expected ',' or '}'"),
        ("01", 1, 2, "may not start with 0"),
        ("1.", 1, 3, "digit after the decimal point"),
        ("1e+", 1, 4, "digit in the exponent"),
        ("\"tab\there\"", 1, 5, "control character"),
        ("\"\\x\"", 1, 3, "unknown escape"),
        ("\"\\ud83d\"", 1, 8, "low surrogate"),
        ("\"open", 1, 6, "not closed"),
        ("tru", 1, 1, "expected a value"),
        ("{} {}", 1, 4, "after the JSON value"),
        ("1e999", 1, 1, "too large"),
    ])
    func malformedDocumentsSayWhereAndWhy(text: String, line: Int, column: Int, words: String) {
        #expect(throws: JSONSyntaxError.self) { try parse(text) }
        do {
            _ = try parse(text)
        } catch {
            #expect(error.line == line, "\(error)")
            #expect(error.column == column, "\(error)")
            #expect(error.message.contains(words), "\(error)")
            #expect(error.description.hasPrefix("line \(line), column \(column): "))
        }
    }

    @Test func invalidUTF8IsRefused() {
        #expect(throws: JSONSyntaxError.self) { try JSONValue(parsing: [0x22, 0xC3, 0x28, 0x22]) }
        #expect(throws: JSONSyntaxError.self) { try JSONValue(parsing: [0x22, 0x5C, 0x6E, 0xFF, 0x22]) }
    }

    @Test func stringsWithoutEscapesKeepTheirCharactersWhetherASCIIOrNot() throws {
        #expect(
            try parse(#"["plain","é ü 日本","🙂",""]"#)
                == .array([.string("plain"), .string("é ü 日本"), .string("🙂"), .string("")])
        )
        // A lone continuation byte after ASCII text, and a truncated sequence at the end, are not UTF-8.
        #expect(throws: JSONSyntaxError.self) { try JSONValue(parsing: [0x22, 0x61, 0x80, 0x22]) }
        #expect(throws: JSONSyntaxError.self) { try JSONValue(parsing: [0x22, 0x61, 0xE6, 0x97, 0x22]) }
    }

    @Test func nestingIsBoundedInsteadOfExhaustingTheStack() throws {
        let ok =
            String(repeating: "[", count: JSONParser.maximumDepth)
            + String(repeating: "]", count: JSONParser.maximumDepth)
        _ = try parse(ok)
        let deep = String(repeating: "[", count: 100_000)
        #expect(throws: JSONSyntaxError.self) { try parse(deep) }
    }

    @Test func serializedValuesParseBackToThemselves() throws {
        let value: JSONValue = .object([
            "s": .string("line\nbreak \"quoted\" \u{1} é"), "i": .int(-7), "d": .double(0.5),
            "a": .array([.null, .bool(true), .object([:])]),
        ])
        #expect(try JSONValue(parsing: value.serialized()) == value)
    }
}

/// Decoding a system's `Event` straight from a parsed `JSONValue`.
struct JSONValueDecoderTests {
    enum Mood: String, Codable, Equatable { case calm, busy }
    struct Inner: Codable, Equatable {
        var tags: [String]
        var weight: Double?
    }
    struct Sample: Codable, Equatable {
        var name: String
        var count: Int
        var small: UInt8
        var ratio: Float
        var mood: Mood
        var inner: Inner
        var matrix: [[Int]]
        var byKey: [String: Int]
        var link: URL
        var blob: Data
        var missing: String?
        var flag: Bool
    }

    private let text = #"""
        {"name":"n","count":3,"small":255,"ratio":0.5,"mood":"busy","inner":{"tags":["a","b"],"weight":null},
         "matrix":[[1,2],[]],"byKey":{"x":1},"link":"https://example.com/a?b=c","blob":"AQID","flag":true}
        """#

    @Test func decodesWhatJSONDecoderDecodesFromTheSameText() throws {
        let expected = try JSONDecoder().decode(Sample.self, from: Data(text.utf8))
        let value = try JSONValue(parsing: Array(text.utf8))
        #expect(try value.decode(Sample.self) == expected)
        #expect(expected.blob == Data([1, 2, 3]))
    }

    @Test func integralNumbersConvertAndOthersAreRefused() throws {
        #expect(try JSONValue.double(3).decode(Int.self) == 3)
        #expect(try JSONValue.int(3).decode(Double.self) == 3)
        #expect(throws: DecodingError.self) { try JSONValue.double(3.5).decode(Int.self) }
        #expect(throws: DecodingError.self) { try JSONValue.int(256).decode(UInt8.self) }
        #expect(throws: DecodingError.self) { try JSONValue.int(-1).decode(UInt.self) }
    }

    @Test func errorsNameTheFieldLikeJSONDecoderDoes() throws {
        let value = try JSONValue(parsing: Array(#"{"inner":{"tags":["a",7]}}"#.utf8))
        do {
            _ = try value.decode([String: Inner].self)
            Issue.record("decoded a number as a string")
        } catch DecodingError.typeMismatch(_, let context) {
            #expect(context.codingPath.map(\.stringValue) == ["inner", "tags", "1"])
        }
        do {
            _ = try JSONValue.object([:]).decode(Inner.self)
            Issue.record("decoded without the required field")
        } catch DecodingError.keyNotFound(let key, _) {
            #expect(key.stringValue == "tags")
        }
        do {
            _ = try JSONValue.object(["tags": .null]).decode(Inner.self)
            Issue.record("decoded null as an array")
        } catch DecodingError.valueNotFound {
        }
    }

    @Test func aJSONValueFieldIsTakenAsItIs() throws {
        struct Holder: Decodable { var payload: JSONValue }
        let payload: JSONValue = .array([.int(1), .object(["a": .string("b")])])
        #expect(try JSONValue.object(["payload": payload]).decode(Holder.self).payload == payload)
    }
}

/// A name twice in one object is refused where it is, unless the caller reads documents it does not act on.
struct JSONDuplicateNameTests {
    @Test func aRepeatedNameIsRefusedAtItsSecondPlace() {
        #expect(throws: JSONSyntaxError.self) { try JSONValue(parsing: Array(#"{"a":1,"a":2}"#.utf8)) }
        do {
            _ = try JSONValue(parsing: Array("{\"type\":\"add\",\n \"type\":\"increment\"}".utf8))
            Issue.record("a repeated name parsed")
        } catch {
            #expect(error.line == 2)
            #expect(error.column == 2)
            #expect(error.message == #"the member "type" appears twice in one object; send each name once"#)
        }
    }

    @Test func namesRepeatedInDifferentObjectsAreFine() throws {
        let value = try JSONValue(parsing: Array(#"{"a":{"a":1},"b":[{"a":2},{"a":3}]}"#.utf8))
        #expect(
            value
                == .object([
                    "a": .object(["a": .int(1)]), "b": .array([.object(["a": .int(2)]), .object(["a": .int(3)])]),
                ])
        )
    }

    @Test func aLenientReadKeepsTheLastValue() throws {
        let value = try JSONValue(parsing: Array(#"{"a":1,"a":2}"#.utf8), allowingDuplicateNames: true)
        #expect(value == .object(["a": .int(2)]))
    }
}

/// What a client must send, in the API's words: never a Swift type's name.
struct JSONKindWordingTests {
    @Test func kindsAreSaidInWords() {
        #expect(JSONValue.kind(of: Int.self) == "an integer")
        #expect(JSONValue.kind(of: Int32.self) == "an integer from -2147483648 to 2147483647")
        #expect(JSONValue.kind(of: UInt8.self) == "an integer from 0 to 255")
        #expect(JSONValue.kind(of: Double.self) == "a number")
        #expect(JSONValue.kind(of: String.self) == "a string")
        #expect(JSONValue.kind(of: Bool.self) == "true or false")
        #expect(JSONValue.kind(of: [String].self) == "an array")
        #expect(JSONValue.kind(of: [String: JSONValue].self) == "an object")
    }

    @Test func aMismatchNamesTheKindNotTheType() {
        struct Point: Decodable { let x: Int16 }
        do {
            _ = try JSONValue.object(["x": .string("far")]).decode(Point.self)
            Issue.record("decoded")
        } catch {
            guard case .typeMismatch(_, let context) = error as? DecodingError else {
                Issue.record("not a type mismatch: \(error)")
                return
            }
            #expect(context.debugDescription == "expected an integer from -32768 to 32767 but found a string")
        }
    }
}

/// The product's one JSON string escaper: what it writes parses back to the same string.
struct JSONStringTests {
    @Test func escapesQuotesBackslashesAndControlBytesAndRoundTrips() throws {
        let text = "a\"b\\c\nd\re\tf\u{01}g\u{1F}h é 😀"
        let quoted = JSONString.quoted(text)
        #expect(String(decoding: quoted, as: UTF8.self) == #""a\"b\\c\nd\re\tf\u0001g\u001fh é 😀""#)
        #expect(try JSONValue(parsing: quoted) == .string(text))
    }
}

/// Integers past 64 bits are refused, not rounded into range.
struct JSONIntegerRangeTests {
    @Test func integersJustPastTheRangeAreRefused() throws {
        struct Count: Decodable { let count: Int }
        for text in ["-9223372036854775809", "-9223372036854776833", "9223372036854775808", "1e19"] {
            let value = try JSONValue(parsing: Array(#"{"count":\#(text)}"#.utf8))
            #expect(throws: DecodingError.self, "\(text)") { try value.decode(Count.self) }
        }
        let lowest = try JSONValue(parsing: Array(#"{"count":-9223372036854775808}"#.utf8))
        #expect(try lowest.decode(Count.self).count == Int.min)
    }
}
