/// Byte classes of RFC 9110/9112, as lookup tables. Pure, immutable, shared by every queue.
enum ASCII {
    static let cr = UInt8(ascii: "\r")
    static let lf = UInt8(ascii: "\n")
    static let sp = UInt8(ascii: " ")
    static let htab = UInt8(ascii: "\t")
    static let colon = UInt8(ascii: ":")
    static let semicolon = UInt8(ascii: ";")
    static let comma = UInt8(ascii: ",")

    /// tchar: the bytes allowed in a token (method, field name, transfer coding).
    static let token = alphanumerics(and: "!#$%&'*+-.^_`|~")

    /// field-vchar, SP, HTAB and obs-text: what a field value may hold. No CTL, no DEL, no CR/LF/NUL.
    @inline(__always)
    static func isFieldValue(_ b: UInt8) -> Bool { b == 0x09 || (b >= 0x20 && b != 0x7F) }

    /// The bytes a request line may hold besides its CRLF: visible ASCII and SP.
    @inline(__always)
    static func isRequestLine(_ b: UInt8) -> Bool { b >= 0x20 && b <= 0x7E }

    /// `isFieldValue` as a table (for loops that look up a byte class per byte of a slice).
    static let fieldValue: [Bool] = (0..<256).map { isFieldValue(UInt8($0)) }

    /// `isRequestLine` as a table.
    static let requestLine: [Bool] = (0..<256).map { isRequestLine(UInt8($0)) }

    /// What a Host field value may hold (RFC 3986 authority without userinfo): unreserved, pct-encoded, sub-delims
    /// except the comma (a list is never one host), `:` and the brackets of an IP literal.
    static let host = alphanumerics(and: "-._~%!$&'()*+;=:[]")

    /// A table of ASCII letters, digits and the bytes of `others`.
    private static func alphanumerics(and others: String) -> [Bool] {
        (0..<256).map { b in
            switch UInt8(b) {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"):
                true
            default:
                others.utf8.contains(UInt8(b))
            }
        }
    }

    /// The bytes a request target may hold: visible ASCII only.
    static let target: [Bool] = (0..<256).map { b in b >= 0x21 && b <= 0x7E }

    static func lower(_ b: UInt8) -> UInt8 {
        b >= UInt8(ascii: "A") && b <= UInt8(ascii: "Z") ? b | 0x20 : b
    }

    static func isWhitespace(_ b: UInt8) -> Bool { b == sp || b == htab }

    static func hexValue(_ b: UInt8) -> Int? {
        switch b {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): Int(b - UInt8(ascii: "0"))
        case UInt8(ascii: "a")...UInt8(ascii: "f"): Int(b - UInt8(ascii: "a") + 10)
        case UInt8(ascii: "A")...UInt8(ascii: "F"): Int(b - UInt8(ascii: "A") + 10)
        default: nil
        }
    }

    /// Whether `bytes` equal `name` ignoring ASCII case.
    static func equalsIgnoringCase(_ bytes: UnsafeBufferPointer<UInt8>, _ name: StaticString) -> Bool {
        guard bytes.count == name.utf8CodeUnitCount else { return false }
        let p = name.utf8Start
        for i in 0..<bytes.count where lower(bytes[i]) != p[i] { return false }
        return true
    }

    /// Trims SP and HTAB from both ends of a range of `buffer`.
    static func trimmed(_ buffer: UnsafeBufferPointer<UInt8>, _ range: Range<Int>) -> Range<Int> {
        var lo = range.lowerBound
        var hi = range.upperBound
        while lo < hi, isWhitespace(buffer[lo]) { lo += 1 }
        while hi > lo, isWhitespace(buffer[hi - 1]) { hi -= 1 }
        return lo..<hi
    }
}
