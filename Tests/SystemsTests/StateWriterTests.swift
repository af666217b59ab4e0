import FeedbackJSON
import Foundation
import Testing

@testable import SystemKit

/// `StateWriter` against the encoder it replaces: `JSONEncoder` with `[.sortedKeys, .withoutEscapingSlashes]`, byte
/// for byte, over literal edge cases and random values (a fixed seed, so a failure repeats).
@Suite(.timeLimit(.minutes(1)))
struct StateWriterTests {
    static func reference(_ value: some Encodable) throws -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return Array(try encoder.encode(value))
    }

    private func expectSame(_ value: some Encodable, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let written = try StateWriter.write(value)
        let expected = try Self.reference(value)
        #expect(
            written == expected,
            "\(String(decoding: written, as: UTF8.self)) != \(String(decoding: expected, as: UTF8.self))",
            sourceLocation: sourceLocation
        )
    }

    @Test func keysAreOrderedByTheirUTF8BytesNotByStringComparison() throws {
        let keys = ["b", "B", "é", "f", "10", "9", "a/b", "_", "Z", "z", "ä", "\u{1F600}", "\u{FF21}", "", "e\u{301}x"]
        let object = Dictionary(uniqueKeysWithValues: keys.enumerated().map { ($1, $0) })
        try expectSame(object)
        // `String <` puts "é" before "f" only after normalising; the bytes put U+FF21 before U+1F600 either way.
        let written = String(decoding: try StateWriter.write(["é": 1, "z": 2, "\u{FF21}": 3]), as: UTF8.self)
        #expect(written == #"{"z":2,"é":1,"Ａ":3}"#)
    }

    @Test func numbersAreWrittenAsJSONEncoderWritesThem() throws {
        let doubles: [Double] = [
            0, -0.0, 1, -1, 0.1, 1e20, 1e-7, 1.5e300, .leastNonzeroMagnitude, .greatestFiniteMagnitude,
            1.2345678901234568e20,
            0.30000000000000004, 1e16, 1e15, 12.5, -3.25e-5,
        ]
        try expectSame(doubles)
        try expectSame([Float(0.1), 1, 1e20, 3.4028235e38, -0.0, 1e-7])
        try expectSame([Int.min, Int.max, 0, -1])
        try expectSame([UInt64.max, 0])
        try expectSame([Int8.min, Int8.max])
        try expectSame(["d": 2.0, "i": 3] as [String: Double])
    }

    @Test func stringsAreEscapedAsJSONEncoderEscapesThem() throws {
        var control = ""
        for scalar in 0..<0x20 { control.unicodeScalars.append(Unicode.Scalar(UInt8(scalar))) }
        try expectSame([
            control, "a\"b\\c/d", "\u{7f}\u{80}\u{2028}\u{2029}é\u{1F600}", "</script>", "", "plain",
        ])
        try expectSame(["k\"\\/\n": "v"])
    }

    @Test func nestingOptionalsAndEmptyContainersMatch() throws {
        struct Inner: Codable {
            var a: Int?
            var b: [String]
            var c: [String: [Int]]
        }
        struct Outer: Codable {
            var inner: Inner
            var list: [Inner]
            var none: Inner?
            var flag: Bool
        }
        let inner = Inner(a: nil, b: [], c: ["x": [], "y": [1, 2]])
        try expectSame(Outer(inner: inner, list: [inner, Inner(a: 5, b: ["/"], c: [:])], none: nil, flag: true))
        try expectSame([[Int]]())
        try expectSame([String: Int]())
        try expectSame([Int?.none, 1])
        try expectSame([1: "a", 2: "b"])
    }

    @Test func jsonValuesOfRandomShapesMatch() throws {
        var random = SeededRandom(seed: 17)
        for _ in 0..<2000 {
            try expectSame(random.jsonValue(depth: 3))
        }
    }

    @Test func withPlainOptionsItWritesAsJSONEncoderWithItsDefaults() throws {
        var random = SeededRandom(seed: 23)
        var written = 0
        for _ in 0..<3000 {
            let value = random.jsonValue(depth: 3)
            let expected = Array(try JSONEncoder().encode(value))
            if value.hasObjectOfSeveralMembers {
                // JSONEncoder's order of several members differs from process to process: the same JSON, in the
                // order the value encoded its members.
                let written = try StateWriter.write(value, options: .plain)
                #expect(try JSONValue(parsing: written) == JSONValue(parsing: expected))
            } else {
                #expect(try StateWriter.write(value, options: .plain) == expected)
                written += 1
            }
        }
        #expect(written > 1000)
        #expect(try StateWriter.write(["a/b": "</c>"], options: .plain) == Array(#"{"a\/b":"<\/c>"}"#.utf8))
    }

    /// With the plain options an object's members keep the order they were encoded in; duplicates are still refused.
    @Test func withPlainOptionsMembersKeepTheirEncodedOrder() throws {
        struct Event: Encodable {
            var keys: [String]
            func encode(to encoder: any Encoder) throws {
                var container = encoder.container(keyedBy: TaggedEventKey.self)
                for (index, key) in keys.enumerated() { try container.encode(index, forKey: TaggedEventKey(key)) }
            }
        }
        #expect(
            try StateWriter.write(Event(keys: ["type", "amount"]), options: .plain)
                == Array(#"{"type":0,"amount":1}"#.utf8)
        )
        let many = (0..<12).map { "k\(11 - $0)" }
        let written = try StateWriter.write(Event(keys: many), options: .plain)
        #expect(written.starts(with: Array(#"{"k11":0,"k10":1,"#.utf8)))
        #expect(throws: StateWriter.Unsupported.self) {
            try StateWriter.write(Event(keys: many + ["k5"]), options: .plain)
        }
        #expect(throws: StateWriter.Unsupported.self) {
            try StateWriter.write(Event(keys: ["a", "b", "a"]), options: .plain)
        }
    }

    @Test func whatItCannotPromiseIsLeftToJSONEncoder() throws {
        struct Twice: Encodable {
            func encode(to encoder: any Encoder) throws {
                var container = encoder.container(keyedBy: TaggedEventKey.self)
                try container.encode(1, forKey: TaggedEventKey("a"))
                try container.encode(2, forKey: TaggedEventKey("a"))
            }
        }
        struct Equivalent: Encodable {
            func encode(to encoder: any Encoder) throws {
                var container = encoder.container(keyedBy: TaggedEventKey.self)
                try container.encode(1, forKey: TaggedEventKey("\u{E9}"))
                try container.encode(2, forKey: TaggedEventKey("e\u{301}"))
            }
        }
        struct Nothing: Encodable { func encode(to encoder: any Encoder) throws {} }
        struct Dated: Encodable {
            var at = Date(timeIntervalSinceReferenceDate: 1.5)
            var data = Data([1, 2])
        }
        #expect(throws: StateWriter.Unsupported.self) { try StateWriter.write(Twice()) }
        #expect(throws: StateWriter.Unsupported.self) { try StateWriter.write(Equivalent()) }
        #expect(throws: StateWriter.Unsupported.self) { try StateWriter.write(Twice(), options: .plain) }
        #expect(throws: StateWriter.Unsupported.self) { try StateWriter.write(Equivalent(), options: .plain) }
        #expect(throws: StateWriter.Unsupported.self) { try StateWriter.write(Nothing()) }
        #expect(throws: StateWriter.Unsupported.self) { try StateWriter.write(Dated()) }
        #expect(throws: StateWriter.Unsupported.self) { try StateWriter.write([Double.nan]) }
        #expect(throws: StateWriter.Unsupported.self) { try StateWriter.write(URL(string: "http://a/b")!) }
    }
}

extension JSONValue {
    var hasObjectOfSeveralMembers: Bool {
        switch self {
        case .array(let elements): elements.contains { $0.hasObjectOfSeveralMembers }
        case .object(let members): members.count > 1 || members.values.contains { $0.hasObjectOfSeveralMembers }
        default: false
        }
    }
}

/// SplitMix64: a small seeded generator, so that random cases repeat.
struct SeededRandom: RandomNumberGenerator {
    private var state: UInt64
    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9e37_79b9_7f4a_7c15
        var z = state
        z = (z ^ (z >> 30)) &* 0xbf58_476d_1ce4_e5b9
        z = (z ^ (z >> 27)) &* 0x94d0_49bb_1331_11eb
        return z ^ (z >> 31)
    }

    /// A short string mixing ASCII, escapes, control characters and non-ASCII scalars.
    mutating func string() -> String {
        let pieces = [
            "a", "Z", "0", "_", "/", "\"", "\\", "\n", "\u{0}", "\u{1f}", "\u{7f}", "é", "e\u{301}", "ß", "\u{FF21}",
            "\u{1F600}", " ",
        ]
        var text = ""
        for _ in 0..<Int.random(in: 0...6, using: &self) { text += pieces.randomElement(using: &self)! }
        return text
    }

    mutating func double() -> Double {
        switch Int.random(in: 0..<4, using: &self) {
        case 0: Double(Int.random(in: -1000...1000, using: &self))
        case 1: Double.random(in: -1...1, using: &self)
        case 2: Double(bitPattern: next() & 0x7fef_ffff_ffff_ffff) * (Bool.random(using: &self) ? 1 : -1)
        default: Double.random(in: -1e25...1e25, using: &self)
        }
    }

    mutating func jsonValue(depth: Int) -> JSONValue {
        switch Int.random(in: 0..<(depth > 0 ? 8 : 6), using: &self) {
        case 0: .null
        case 1: .bool(Bool.random(using: &self))
        case 2: .int(Int64(bitPattern: next()) >> Int64.random(in: 0...63, using: &self))
        case 3: .double(double())
        case 4, 5: .string(string())
        case 6: .array((0..<Int.random(in: 0...4, using: &self)).map { _ in jsonValue(depth: depth - 1) })
        default:
            .object(
                Dictionary(
                    (0..<Int.random(in: 0...5, using: &self)).map { _ in (string(), jsonValue(depth: depth - 1)) },
                    uniquingKeysWith: { first, _ in first }
                )
            )
        }
    }
}
