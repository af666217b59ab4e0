/// The one JSON string escaper of the product (RFC 8259 section 7): `"` and `\` escaped, the short forms for LF,
/// CR and HTAB, `\u00XX` for the other control bytes; every other byte of the UTF-8 is copied as it is. A `Style`
/// adds what Foundation's `JSONEncoder` writes besides (`\b`, `\f`, and `\/` unless told not to), for the writers
/// that promise its bytes.
///
/// Pure functions; any thread.
public enum JSONString {
    /// What the escaper writes beyond the product's own form.
    public struct Style: Sendable {
        /// `/` written `\/` (`JSONEncoder` without `.withoutEscapingSlashes`).
        public let escapesSlashes: Bool
        /// Backspace and form feed written `\b` and `\f`, as `JSONEncoder` writes them, not `\u0008` and `\u000c`.
        public let shortBackspaceAndFormFeed: Bool

        /// Creates a style.
        public init(escapesSlashes: Bool, shortBackspaceAndFormFeed: Bool) {
            self.escapesSlashes = escapesSlashes
            self.shortBackspaceAndFormFeed = shortBackspaceAndFormFeed
        }

        /// The product's own form: what `JSONValue`, problems and snapshots write.
        public static let standard = Style(escapesSlashes: false, shortBackspaceAndFormFeed: false)
    }

    /// Appends `value` to `out` as a quoted JSON string, escaped as `style` says.
    @inlinable
    public static func escape(_ value: String, into out: inout [UInt8], _ style: Style = .standard) {
        let slash = style.escapesSlashes ? UInt8(ascii: "/") : quote  // a quote is escaped anyway
        out.append(quote)
        var value = value
        value.withUTF8 { bytes in
            var run = 0
            for (index, byte) in bytes.enumerated()
            where byte < 0x20 || byte == quote || byte == backslash || byte == slash {
                out.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[run..<index]))
                appendEscaped(byte, to: &out, style)
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

    /// The escape sequence of one byte that JSON does not allow bare in a string (or `/`, when the style escapes it).
    @usableFromInline
    static func appendEscaped(_ byte: UInt8, to out: inout [UInt8], _ style: Style) {
        out.append(backslash)
        let short: UInt8? =
            switch byte {
            case quote, backslash, UInt8(ascii: "/"): byte
            case 0x0A: UInt8(ascii: "n")
            case 0x0D: UInt8(ascii: "r")
            case 0x09: UInt8(ascii: "t")
            case 0x08 where style.shortBackspaceAndFormFeed: UInt8(ascii: "b")
            case 0x0C where style.shortBackspaceAndFormFeed: UInt8(ascii: "f")
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
