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
            bytes.withUnsafeBufferPointer { bytes in
                valueBounds(of: name, in: bytes).map { Self.value(bytes, $0.0, $0.1) }
            }
        }
    }

    /// Whether the member `name` is a string equal to one of `candidates`, compared as bytes (no string made).
    public func member(_ name: String, isOneOf candidates: [String]) -> Bool {
        name.withUTF8Bytes { name in
            bytes.withUnsafeBufferPointer { bytes in
                guard let (start, end) = valueBounds(of: name, in: bytes), bytes[start] == UInt8(ascii: "\"") else {
                    return false
                }
                let text = UnsafeBufferPointer(rebasing: bytes[start + 1..<end - 1])
                return candidates.contains { candidate in
                    candidate.withUTF8Bytes { candidate in
                        candidate.count == text.count
                            && (text.isEmpty || memcmp(candidate.baseAddress!, text.baseAddress!, text.count) == 0)
                    }
                }
            }
        }
    }

    /// Where the value of the member `name` is written in `bytes`.
    private func valueBounds(of name: UnsafeBufferPointer<UInt8>, in bytes: UnsafeBufferPointer<UInt8>) -> (Int, Int)? {
        for index in 0..<count {
            let span = spans[index]
            let start = Int(truncatingIfNeeded: span &>> 48)
            let end = Int(truncatingIfNeeded: (span &>> 32) & 0xFFFF)
            guard end - start == name.count,
                name.isEmpty || memcmp(bytes.baseAddress! + start, name.baseAddress!, name.count) == 0
            else { continue }
            return (Int(truncatingIfNeeded: (span &>> 16) & 0xFFFF), Int(truncatingIfNeeded: span & 0xFFFF))
        }
        return nil
    }

    /// The whole object as the parser would have made it.
    public var value: JSONValue {
        bytes.withUnsafeBufferPointer { bytes in
            var members: [String: JSONValue] = [:]
            members.reserveCapacity(count)
            for index in 0..<count {
                let span = spans[index]
                let name = UnsafeBufferPointer(
                    rebasing: bytes[Int(span &>> 48)..<Int((span &>> 32) & 0xFFFF)]
                )
                members[String(decoding: name, as: UTF8.self)] = Self.value(
                    bytes,
                    Int((span &>> 16) & 0xFFFF),
                    Int(span & 0xFFFF)
                )
            }
            return .object(members)
        }
    }

    /// The value written in `bytes[start..<end]`, which `scan` found plain.
    private static func value(_ bytes: UnsafeBufferPointer<UInt8>, _ start: Int, _ end: Int) -> JSONValue {
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
                memcmp(bytes.baseAddress! + index, word.utf8Start, count) == 0
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
                for earlier in 0..<count {
                    let span = spans[earlier]
                    let start = Int(span &>> 48)
                    let end = Int((span &>> 32) & 0xFFFF)
                    if end - start == nameEnd - nameStart,
                        memcmp(bytes.baseAddress! + start, bytes.baseAddress! + nameStart, end - start) == 0
                    {
                        return nil
                    }
                }
                spans[count] =
                    UInt64(nameStart) << 48 | UInt64(nameEnd) << 32 | UInt64(valueStart) << 16 | UInt64(index)
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
