/// The one JSON string escaper of the product (RFC 8259 section 7): `"` and `\` escaped, the short forms for LF,
/// CR and HTAB, `\u00XX` for the other control bytes; every other byte of the UTF-8 is copied as it is.
///
/// Pure functions; any thread.
public enum JSONString {
    /// Appends `value` to `out` as a quoted JSON string.
    @inlinable
    public static func escape(_ value: String, into out: inout [UInt8]) {
        out.append(quote)
        var value = value
        value.withUTF8 { bytes in
            var run = 0
            for (index, byte) in bytes.enumerated() where byte < 0x20 || byte == quote || byte == backslash {
                out.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[run..<index]))
                appendEscaped(byte, to: &out)
                run = index + 1
            }
            out.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[run...]))
        }
        out.append(quote)
    }

    /// `value` as a quoted JSON string.
    @inlinable
    public static func quoted(_ value: String) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(value.utf8.count + 2)
        escape(value, into: &out)
        return out
    }

    @usableFromInline static let quote = UInt8(ascii: "\"")
    @usableFromInline static let backslash = UInt8(ascii: "\\")

    /// The escape sequence of one byte that JSON does not allow bare in a string.
    @usableFromInline
    static func appendEscaped(_ byte: UInt8, to out: inout [UInt8]) {
        out.append(backslash)
        let short: UInt8? =
            switch byte {
            case quote, backslash: byte
            case 0x0A: UInt8(ascii: "n")
            case 0x0D: UInt8(ascii: "r")
            case 0x09: UInt8(ascii: "t")
            default: nil
            }
        if let short {
            out.append(short)
            return
        }
        let digits = Array("0123456789abcdef".utf8)
        out.append(contentsOf: [UInt8(ascii: "u"), UInt8(ascii: "0"), UInt8(ascii: "0")])
        out.append(digits[Int(byte >> 4)])
        out.append(digits[Int(byte & 0xF)])
    }
}
