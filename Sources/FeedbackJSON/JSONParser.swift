/// Where and why JSON text does not parse: "line 1, column 27: expected ',' or '}' after a member".
public struct JSONSyntaxError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The byte offset of the problem, from 0.
    public let offset: Int
    /// The line of the problem, from 1.
    public let line: Int
    /// The column of the problem in bytes, from 1.
    public let column: Int
    /// What was wrong, in words.
    public let message: String

    public var description: String { "line \(line), column \(column): \(message)" }
}

/// A strict RFC 8259 parser from UTF-8 bytes to ``JSONValue``, in one pass with no intermediate objects.
///
/// Integers that fit in `Int64` (no fraction, no exponent) become `.int`, every other number `.double`. Strings
/// must be valid UTF-8 with no raw control characters; nesting is limited to ``maximumDepth`` so hostile input
/// cannot exhaust the stack. A value type used on one thread at a time.
struct JSONParser {
    /// The deepest nesting of arrays and objects accepted.
    static let maximumDepth = 256

    private let bytes: UnsafeBufferPointer<UInt8>
    /// Whether a name may appear twice in one object (the last value wins). Off for what clients send: a proxy
    /// that reads the first of two `"type"` members would disagree with a server that reads the last.
    private let allowsDuplicateNames: Bool
    private var index = 0
    private var depth = 0

    private init(_ bytes: UnsafeBufferPointer<UInt8>, allowsDuplicateNames: Bool) {
        self.bytes = bytes
        self.allowsDuplicateNames = allowsDuplicateNames
    }

    /// Parses a whole document: one value with only whitespace around it.
    static func parse(
        _ bytes: UnsafeBufferPointer<UInt8>,
        allowsDuplicateNames: Bool = false
    ) throws(JSONSyntaxError) -> JSONValue {
        var parser = JSONParser(bytes, allowsDuplicateNames: allowsDuplicateNames)
        parser.skipWhitespace()
        let value = try parser.parseValue()
        parser.skipWhitespace()
        guard parser.index == bytes.count else { throw parser.error("unexpected text after the JSON value") }
        return value
    }

    private mutating func parseValue() throws(JSONSyntaxError) -> JSONValue {
        guard index < bytes.count else { throw error("the text ends where a value should start") }
        switch bytes[index] {
        case UInt8(ascii: "{"): return try parseObject()
        case UInt8(ascii: "["): return try parseArray()
        case UInt8(ascii: "\""): return .string(try parseString())
        case UInt8(ascii: "t"): return try literal("true", .bool(true))
        case UInt8(ascii: "f"): return try literal("false", .bool(false))
        case UInt8(ascii: "n"): return try literal("null", .null)
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return try parseNumber()
        default: throw error("expected a value (object, array, string, number, true, false or null)")
        }
    }

    private mutating func parseObject() throws(JSONSyntaxError) -> JSONValue {
        try enter()
        index += 1
        var members: [String: JSONValue] = [:]
        skipWhitespace()
        if peek == UInt8(ascii: "}") {
            index += 1
            depth -= 1
            return .object(members)
        }
        while true {
            guard peek == UInt8(ascii: "\"") else { throw error("expected a member name in double quotes") }
            let keyStart = index
            let key = try parseString()
            skipWhitespace()
            guard peek == UInt8(ascii: ":") else { throw error("expected ':' after the member name \"\(key)\"") }
            index += 1
            skipWhitespace()
            if members.isEmpty {
                // The first member makes the dictionary with room for it: its name hashed once (inserting it into the
                // empty one grew that first and hashed the name again).
                members = [key: try parseValue()]
            } else if members.updateValue(try parseValue(), forKey: key) != nil, !allowsDuplicateNames {
                index = keyStart
                throw error("the member \"\(key)\" appears twice in one object; send each name once")
            }
            skipWhitespace()
            switch peek {
            case UInt8(ascii: ","):
                index += 1
                skipWhitespace()
            case UInt8(ascii: "}"):
                index += 1
                depth -= 1
                return .object(members)
            default:
                throw error("expected ',' or '}' after the member \"\(key)\"")
            }
        }
    }

    private mutating func parseArray() throws(JSONSyntaxError) -> JSONValue {
        try enter()
        index += 1
        var elements: [JSONValue] = []
        skipWhitespace()
        if peek == UInt8(ascii: "]") {
            index += 1
            depth -= 1
            return .array(elements)
        }
        while true {
            elements.append(try parseValue())
            skipWhitespace()
            switch peek {
            case UInt8(ascii: ","):
                index += 1
                skipWhitespace()
            case UInt8(ascii: "]"):
                index += 1
                depth -= 1
                return .array(elements)
            default:
                throw error("expected ',' or ']' after an array element")
            }
        }
    }

    private mutating func enter() throws(JSONSyntaxError) {
        depth += 1
        guard depth <= Self.maximumDepth else {
            throw error("arrays and objects nest deeper than \(Self.maximumDepth) levels")
        }
    }

    private mutating func literal(_ word: StaticString, _ value: JSONValue) throws(JSONSyntaxError) -> JSONValue {
        let count = word.utf8CodeUnitCount
        guard index + count <= bytes.count,
            memcmpEqual(word.utf8Start, bytes.baseAddress! + index, count)
        else { throw error("expected a value (object, array, string, number, true, false or null)") }
        index += count
        return value
    }

    private func memcmpEqual(_ a: UnsafePointer<UInt8>, _ b: UnsafePointer<UInt8>, _ count: Int) -> Bool {
        for offset in 0..<count where a[offset] != b[offset] { return false }
        return true
    }

    private mutating func parseNumber() throws(JSONSyntaxError) -> JSONValue {
        let start = index
        var integral = true
        if peek == UInt8(ascii: "-") { index += 1 }
        guard let first = peek, isDigit(first) else { throw error("expected a digit in the number") }
        if first == UInt8(ascii: "0") {
            index += 1
            if let next = peek, isDigit(next) { throw error("a number may not start with 0 followed by digits") }
        } else {
            skipDigits()
        }
        if peek == UInt8(ascii: ".") {
            integral = false
            index += 1
            guard let digit = peek, isDigit(digit) else { throw error("expected a digit after the decimal point") }
            skipDigits()
        }
        if peek == UInt8(ascii: "e") || peek == UInt8(ascii: "E") {
            integral = false
            index += 1
            if peek == UInt8(ascii: "+") || peek == UInt8(ascii: "-") { index += 1 }
            guard let digit = peek, isDigit(digit) else { throw error("expected a digit in the exponent") }
            skipDigits()
        }
        let text = UnsafeBufferPointer(rebasing: bytes[start..<index])
        if integral, let value = Self.integer(text) { return .int(value) }
        guard let value = Double(String(decoding: text, as: UTF8.self)), value.isFinite else {
            index = start
            throw error("the number is too large")
        }
        return .double(value)
    }

    /// The value of an optionally negative run of digits, or nil when it does not fit in `Int64`.
    private static func integer(_ text: UnsafeBufferPointer<UInt8>) -> Int64? {
        let negative = text.first == UInt8(ascii: "-")
        var magnitude: UInt64 = 0
        for digit in text.dropFirst(negative ? 1 : 0) {
            let (times10, overflow1) = magnitude.multipliedReportingOverflow(by: 10)
            let (sum, overflow2) = times10.addingReportingOverflow(UInt64(digit &- UInt8(ascii: "0")))
            if overflow1 || overflow2 { return nil }
            magnitude = sum
        }
        if negative {
            guard magnitude <= UInt64(Int64.max) + 1 else { return nil }
            return magnitude == UInt64(Int64.max) + 1 ? Int64.min : -Int64(magnitude)
        }
        guard magnitude <= UInt64(Int64.max) else { return nil }
        return Int64(magnitude)
    }

    private mutating func parseString() throws(JSONSyntaxError) -> String {
        index += 1
        let start = index
        // Fast path: no escapes, so the bytes are the string.
        var highBits: UInt8 = 0
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "\"") {
                let raw = UnsafeBufferPointer(rebasing: bytes[start..<index])
                // ASCII is valid UTF-8: `String(decoding:)` is specialised for it, `String(validating:)` is generic.
                if highBits < 0x80 {
                    index += 1
                    return String(decoding: raw, as: UTF8.self)
                }
                guard let string = String(validating: raw, as: UTF8.self) else {
                    index = start
                    throw error("the string is not valid UTF-8")
                }
                index += 1
                return string
            }
            if byte == UInt8(ascii: "\\") { break }
            if byte < 0x20 { throw error("a control character must be escaped in a string (\\n, \\t, \\u00XX)") }
            highBits |= byte
            index += 1
        }
        var decoded = Array(bytes[start..<index])
        while index < bytes.count {
            let byte = bytes[index]
            switch byte {
            case UInt8(ascii: "\""):
                guard let string = String(validating: decoded, as: UTF8.self) else {
                    index = start
                    throw error("the string is not valid UTF-8")
                }
                index += 1
                return string
            case UInt8(ascii: "\\"):
                try parseEscape(into: &decoded)
            case 0..<0x20:
                throw error("a control character must be escaped in a string (\\n, \\t, \\u00XX)")
            default:
                decoded.append(byte)
                index += 1
            }
        }
        throw error("the string is not closed with '\"'")
    }

    private mutating func parseEscape(into decoded: inout [UInt8]) throws(JSONSyntaxError) {
        index += 1
        guard let escaped = peek else { throw error("the string is not closed with '\"'") }
        index += 1
        switch escaped {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): decoded.append(escaped)
        case UInt8(ascii: "b"): decoded.append(0x08)
        case UInt8(ascii: "f"): decoded.append(0x0C)
        case UInt8(ascii: "n"): decoded.append(0x0A)
        case UInt8(ascii: "r"): decoded.append(0x0D)
        case UInt8(ascii: "t"): decoded.append(0x09)
        case UInt8(ascii: "u"):
            var scalar = try hexQuad()
            if (0xD800..<0xDC00).contains(scalar) {
                guard peek == UInt8(ascii: "\\"), index + 1 < bytes.count, bytes[index + 1] == UInt8(ascii: "u")
                else { throw error("a high surrogate \\u escape must be followed by a low surrogate") }
                index += 2
                let low = try hexQuad()
                guard (0xDC00..<0xE000).contains(low) else {
                    throw error("a high surrogate \\u escape must be followed by a low surrogate")
                }
                scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
            } else if (0xDC00..<0xE000).contains(scalar) {
                throw error("a low surrogate \\u escape without a high surrogate before it")
            }
            decoded.append(contentsOf: UTF8.encode(Unicode.Scalar(scalar)!)!)
        default:
            index -= 1
            throw error("unknown escape; use \\\", \\\\, \\/, \\b, \\f, \\n, \\r, \\t or \\uXXXX")
        }
    }

    private mutating func hexQuad() throws(JSONSyntaxError) -> UInt32 {
        guard index + 4 <= bytes.count else { throw error("expected 4 hex digits after \\u") }
        var value: UInt32 = 0
        for _ in 0..<4 {
            let byte = bytes[index]
            let digit: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
            default: throw error("expected 4 hex digits after \\u")
            }
            value = value << 4 | UInt32(digit)
            index += 1
        }
        return value
    }

    // MARK: - Bytes

    private var peek: UInt8? { index < bytes.count ? bytes[index] : nil }

    private func isDigit(_ byte: UInt8) -> Bool { byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") }

    private mutating func skipDigits() {
        while index < bytes.count, isDigit(bytes[index]) { index += 1 }
    }

    private mutating func skipWhitespace() {
        while index < bytes.count {
            switch bytes[index] {
            case 0x20, 0x09, 0x0A, 0x0D: index += 1
            default: return
            }
        }
    }

    private func error(_ message: String) -> JSONSyntaxError {
        var line = 1
        var lineStart = 0
        let end = min(index, bytes.count)
        for position in 0..<end where bytes[position] == 0x0A {
            line += 1
            lineStart = position + 1
        }
        return JSONSyntaxError(offset: index, line: line, column: index - lineStart + 1, message: message)
    }
}

extension JSONValue {
    /// Parses JSON text strictly (RFC 8259); the error says where and why it does not parse. A name that appears
    /// twice in one object is refused unless `allowingDuplicateNames` (then the last value wins, for upstream
    /// documents the server only reads).
    public init(parsing bytes: some Collection<UInt8>, allowingDuplicateNames: Bool = false) throws(JSONSyntaxError) {
        let parse = { (buffer: UnsafeBufferPointer<UInt8>) throws(JSONSyntaxError) -> JSONValue in
            try JSONParser.parse(buffer, allowsDuplicateNames: allowingDuplicateNames)
        }
        let parsed = bytes.withContiguousStorageIfAvailable { buffer in
            Result { () throws(JSONSyntaxError) in try parse(buffer) }
        }
        if let parsed {
            self = try parsed.get()
        } else {
            self = try Array(bytes).withUnsafeBufferPointer { buffer throws(JSONSyntaxError) in try parse(buffer) }
        }
    }

    /// Parses JSON text in an array (a request's body): the same as the general form, without its generic way to the
    /// bytes.
    public init(parsing bytes: [UInt8], allowingDuplicateNames: Bool = false) throws(JSONSyntaxError) {
        self = try bytes.withUnsafeBufferPointer { buffer throws(JSONSyntaxError) in
            try JSONParser.parse(buffer, allowsDuplicateNames: allowingDuplicateNames)
        }
    }
}
