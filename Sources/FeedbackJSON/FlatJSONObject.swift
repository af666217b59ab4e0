import Foundation

/// A JSON object of a few plain members, read where its bytes lie: what most posted events are
/// (`{"type":"increment"}`, `{"type":"set","count":3}`), decoded without a ``JSONValue`` tree, a dictionary or a
/// string per name.
///
/// `init?(_:)` accepts a subset of what ``JSONValue/init(parsing:allowingDuplicateNames:)`` accepts, and reads it the
/// same way: an object of at most ``maximumMembers`` distinct names whose values are strings of printable ASCII
/// without escapes, integers that fit in `Int64` (no fraction, no exponent), `true`, `false` or `null`. Anything else,
/// malformed text included, is nil, for the general parser to read or to refuse in its words. So a caller that falls
/// back to the parser on nil answers every body as the parser alone would.
public struct FlatJSONObject: Sendable {
    /// The most members an object may have to be read here.
    public static let maximumMembers = 8

    /// The object's text.
    public let bytes: [UInt8]
    /// Each member's place: its name's first and end offsets (inside the quotes), its value's (a string's with them),
    /// 16 bits each from the most significant. Objects longer than 65,535 bytes are not read here.
    private let spans: SIMD8<UInt64>
    /// How many members the object has.
    public let count: Int

    /// Reads `bytes` as one object of plain members, with only whitespace around it; nil when they are anything else.
    public init?(_ bytes: [UInt8]) {
        guard bytes.count <= Int(UInt16.max),
            let (spans, count) = bytes.withUnsafeBufferPointer({ Self.scan($0) })
        else { return nil }
        self.bytes = bytes
        self.spans = spans
        self.count = count
    }

    /// The value of the member `name`, as the parser reads it; nil when there is none.
    public func member(_ name: String) -> JSONValue? {
        name.withUTF8Bytes { name in
            bytes.withUnsafeBufferPointer { bytes in valueRange(of: name, in: bytes).map { Self.value(bytes, $0) } }
        }
    }

    /// Whether the member `name` is a string equal to one of `candidates`, compared as bytes (no string made).
    public func member(_ name: String, isOneOf candidates: [String]) -> Bool {
        name.withUTF8Bytes { name in
            bytes.withUnsafeBufferPointer { bytes in
                guard let range = valueRange(of: name, in: bytes), bytes[range.lowerBound] == UInt8(ascii: "\"") else {
                    return false
                }
                let text = UnsafeBufferPointer(rebasing: bytes[range.lowerBound + 1..<range.upperBound - 1])
                return candidates.contains { $0.withUTF8Bytes { Self.same($0, text) } }
            }
        }
    }

    /// The whole object as the parser would have made it.
    public var value: JSONValue {
        bytes.withUnsafeBufferPointer { bytes in
            var members: [String: JSONValue] = [:]
            for index in 0..<count {
                let name = UnsafeBufferPointer(rebasing: bytes[Self.nameRange(spans[index])])
                members[String(decoding: name, as: UTF8.self)] = Self.value(bytes, Self.valueRange(spans[index]))
            }
            return .object(members)
        }
    }

    /// Where the value of the member `name` is written in `bytes`.
    private func valueRange(of name: UnsafeBufferPointer<UInt8>, in bytes: UnsafeBufferPointer<UInt8>) -> Range<Int>? {
        for index in 0..<count where Self.same(name, UnsafeBufferPointer(rebasing: bytes[Self.nameRange(spans[index])]))
        {
            return Self.valueRange(spans[index])
        }
        return nil
    }

    /// A member's name (inside its quotes) and value (a string's with them), packed by `scan`.
    private static func nameRange(_ span: UInt64) -> Range<Int> {
        Int(truncatingIfNeeded: span &>> 48)..<Int(truncatingIfNeeded: (span &>> 32) & 0xFFFF)
    }

    private static func valueRange(_ span: UInt64) -> Range<Int> {
        Int(truncatingIfNeeded: (span &>> 16) & 0xFFFF)..<Int(truncatingIfNeeded: span & 0xFFFF)
    }

    private static func span(name: Range<Int>, value: Range<Int>) -> UInt64 {
        UInt64(name.lowerBound) << 48 | UInt64(name.upperBound) << 32 | UInt64(value.lowerBound) << 16
            | UInt64(value.upperBound)
    }

    /// Whether two runs of bytes are equal.
    private static func same(_ a: UnsafeBufferPointer<UInt8>, _ b: UnsafeBufferPointer<UInt8>) -> Bool {
        a.count == b.count && (a.isEmpty || memcmp(a.baseAddress!, b.baseAddress!, a.count) == 0)
    }

    /// The value written in `bytes[range]`, which `scan` found plain.
    private static func value(_ bytes: UnsafeBufferPointer<UInt8>, _ range: Range<Int>) -> JSONValue {
        let (start, end) = (range.lowerBound, range.upperBound)
        switch bytes[start] {
        case UInt8(ascii: "\""):
            return .string(String(decoding: UnsafeBufferPointer(rebasing: bytes[start + 1..<end - 1]), as: UTF8.self))
        case UInt8(ascii: "t"): return .bool(true)
        case UInt8(ascii: "f"): return .bool(false)
        case UInt8(ascii: "n"): return .null
        default:
            // At most 18 digits (`scan`): the magnitude fits.
            let negative = bytes[start] == UInt8(ascii: "-")
            var magnitude: Int64 = 0
            for offset in (negative ? start + 1 : start)..<end {
                magnitude = magnitude &* 10 &+ Int64(bytes[offset] &- UInt8(ascii: "0"))
            }
            return .int(negative ? -magnitude : magnitude)
        }
    }

    /// The members' places and count, or nil when `bytes` are not one object of plain members.
    private static func scan(_ bytes: UnsafeBufferPointer<UInt8>) -> (SIMD8<UInt64>, Int)? {
        var index = 0
        func skipWhitespace() {
            while index < bytes.count,
                bytes[index] == 0x20 || bytes[index] == 0x0A || bytes[index] == 0x0D
                    || bytes[index] == 0x09
            {
                index += 1
            }
        }
        /// Past a string of printable ASCII without escapes that starts at `index` (its opening quote): its end.
        func skipPlainString() -> Int? {
            index += 1
            while index < bytes.count {
                let byte = bytes[index]
                if byte == UInt8(ascii: "\"") {
                    index += 1
                    return index - 1
                }
                guard byte >= 0x20, byte < 0x80, byte != UInt8(ascii: "\\") else { return nil }
                index += 1
            }
            return nil
        }
        func skipWord(_ word: StaticString) -> Bool {
            let count = word.utf8CodeUnitCount
            guard index + count <= bytes.count,
                same(
                    UnsafeBufferPointer(start: bytes.baseAddress! + index, count: count),
                    UnsafeBufferPointer(start: word.utf8Start, count: count)
                )
            else { return false }
            index += count
            return true
        }
        /// Past an integer the parser reads as `.int`, of at most 18 digits.
        func skipInteger() -> Bool {
            if bytes[index] == UInt8(ascii: "-") { index += 1 }
            let digits = index
            while index < bytes.count, bytes[index] >= UInt8(ascii: "0"), bytes[index] <= UInt8(ascii: "9") {
                index += 1
            }
            let count = index - digits
            guard count > 0, count <= 18, count == 1 || bytes[digits] != UInt8(ascii: "0") else { return false }
            // A fraction or an exponent makes a `.double`, which is the parser's to read.
            return index == bytes.count
                || (bytes[index] != UInt8(ascii: ".") && bytes[index] != UInt8(ascii: "e")
                    && bytes[index] != UInt8(ascii: "E"))
        }

        var spans = SIMD8<UInt64>()
        var count = 0
        skipWhitespace()
        guard index < bytes.count, bytes[index] == UInt8(ascii: "{") else { return nil }
        index += 1
        skipWhitespace()
        if index < bytes.count, bytes[index] == UInt8(ascii: "}") {
            index += 1
        } else {
            while true {
                guard count < maximumMembers, index < bytes.count, bytes[index] == UInt8(ascii: "\"") else {
                    return nil
                }
                let nameStart = index + 1
                guard let nameEnd = skipPlainString() else { return nil }
                skipWhitespace()
                guard index < bytes.count, bytes[index] == UInt8(ascii: ":") else { return nil }
                index += 1
                skipWhitespace()
                guard index < bytes.count else { return nil }
                let valueStart = index
                switch bytes[index] {
                case UInt8(ascii: "\""): guard skipPlainString() != nil else { return nil }
                case UInt8(ascii: "t"): guard skipWord("true") else { return nil }
                case UInt8(ascii: "f"): guard skipWord("false") else { return nil }
                case UInt8(ascii: "n"): guard skipWord("null") else { return nil }
                case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): guard skipInteger() else { return nil }
                default: return nil  // an object or an array, or no value
                }
                // A name twice is the parser's to refuse.
                let name = UnsafeBufferPointer(rebasing: bytes[nameStart..<nameEnd])
                for earlier in 0..<count
                where same(name, UnsafeBufferPointer(rebasing: bytes[nameRange(spans[earlier])])) {
                    return nil
                }
                spans[count] = span(name: nameStart..<nameEnd, value: valueStart..<index)
                count += 1
                skipWhitespace()
                guard index < bytes.count else { return nil }
                if bytes[index] == UInt8(ascii: "}") {
                    index += 1
                    break
                }
                guard bytes[index] == UInt8(ascii: ",") else { return nil }
                index += 1
                skipWhitespace()
            }
        }
        skipWhitespace()
        return index == bytes.count ? (spans, count) : nil
    }
}
