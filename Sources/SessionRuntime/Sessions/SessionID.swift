/// A session's id: 128 random bits from the system's CSPRNG, written as 22 base64url characters.
///
/// Knowing the id is what gives access to a session, so ids are unguessable and are parsed strictly.
public struct SessionID: Sendable, Hashable, CustomStringConvertible {
    /// The id's text, 22 characters of `A-Z a-z 0-9 - _`.
    public let description: String

    /// A new random id.
    public static func random() -> SessionID {
        var generator = SystemRandomNumberGenerator()
        let high = generator.next() as UInt64
        let low = generator.next() as UInt64
        var bytes: [UInt8] = []
        bytes.reserveCapacity(16)
        for shift in stride(from: 56, through: 0, by: -8) {
            bytes.append(UInt8(truncatingIfNeeded: high >> UInt64(shift)))
        }
        for shift in stride(from: 56, through: 0, by: -8) {
            bytes.append(UInt8(truncatingIfNeeded: low >> UInt64(shift)))
        }
        return SessionID(unchecked: Self.base64URL(bytes))
    }

    /// Parses an id from a path or a header; nil unless it is exactly 22 base64url characters.
    public init?(_ text: some StringProtocol) {
        self.init(String(text))
    }

    /// Parses an id from a path or a header; nil unless it is exactly 22 base64url characters. (The generic
    /// initializer's code, unspecialised where it is called from another module, cost a post about 1 % of its CPU.)
    public init?(_ text: String) {
        var text = text
        let valid = text.withUTF8 { bytes in
            guard bytes.count == 22 else { return false }
            for byte in bytes where !Self.isBase64URL(byte) { return false }
            // 22 characters carry 132 bits; the last one holds 2 bits of the id and 4 zero bits: A, Q, g or w.
            switch bytes[21] {
            case UInt8(ascii: "A"), UInt8(ascii: "Q"), UInt8(ascii: "g"), UInt8(ascii: "w"): return true
            default: return false
            }
        }
        guard valid else { return nil }
        description = text
    }

    private init(unchecked text: String) {
        description = text
    }

    /// Hashed by the first 16 of its 22 characters as two words (96 of its random bits; equality still compares the
    /// whole id): the session table's lookup on every request hashes two words instead of the string's bytes.
    public func hash(into hasher: inout Hasher) {
        let hashed: Void? = description.utf8.withContiguousStorageIfAvailable { bytes in
            guard bytes.count >= 16, let base = bytes.baseAddress else { return hasher.combine(description) }
            hasher.combine(UnsafeRawPointer(base).loadUnaligned(as: UInt64.self))
            hasher.combine(UnsafeRawPointer(base).loadUnaligned(fromByteOffset: 8, as: UInt64.self))
        }
        if hashed == nil { hasher.combine(description) }
    }

    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)

    private static func isBase64URL(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "_"):
            true
        default:
            false
        }
    }

    /// Unpadded base64url (RFC 4648 §5).
    package static func base64URL(_ bytes: [UInt8]) -> String {
        var out: [UInt8] = []
        out.reserveCapacity((bytes.count * 4 + 2) / 3)
        var index = 0
        while index < bytes.count {
            let b0 = UInt32(bytes[index])
            let b1 = index + 1 < bytes.count ? UInt32(bytes[index + 1]) : 0
            let b2 = index + 2 < bytes.count ? UInt32(bytes[index + 2]) : 0
            let triple = b0 << 16 | b1 << 8 | b2
            let available = min(bytes.count - index, 3) + 1
            for position in 0..<available {
                out.append(alphabet[Int(triple >> UInt32(18 - 6 * position) & 0x3F)])
            }
            index += 3
        }
        return String(decoding: out, as: UTF8.self)
    }
}
