/// A session's id: 128 random bits from the system's CSPRNG, written as 22 base64url characters.
///
/// Knowing the id is what gives access to a session, so ids are unguessable and are parsed strictly.
public struct SessionID: Sendable, Hashable, CustomStringConvertible {
    /// The id's 22 characters as bytes, eight to a word (little-endian: the first character in the low byte of
    /// `first`), the last word's top two bytes zero. Held in the value, not as a `String`: an id parsed from a path
    /// makes no string, copying it retains nothing, and the session table compares three words.
    private let first: UInt64
    private let second: UInt64
    private let third: UInt64

    /// The id's text, 22 characters of `A-Z a-z 0-9 - _` (made when asked for).
    public var description: String {
        String(unsafeUninitializedCapacity: Self.length) { buffer in
            withText { _ = buffer.initialize(from: $0) }
            return Self.length
        }
    }

    /// Appends the id's 22 characters to `out`, with no string made (an answer's `"id"` member).
    public func appendText(to out: inout [UInt8]) {
        withText { out.append(contentsOf: $0) }
    }

    /// Calls `body` with the id's 22 characters' bytes.
    private func withText(_ body: (UnsafeRawBufferPointer) -> Void) {
        withUnsafeBytes(of: (first.littleEndian, second.littleEndian, third.littleEndian)) {
            body(.init(rebasing: $0.prefix(Self.length)))
        }
    }

    /// The length of an id's text.
    static let length = 22

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
        var text = Self.base64URL(bytes)
        return text.withUTF8 { SessionID(utf8: $0) }!
    }

    /// Parses an id from a path or a header; nil unless it is exactly 22 base64url characters.
    public init?(_ text: some StringProtocol) {
        self.init(String(text))
    }

    /// Parses an id from a path or a header; nil unless it is exactly 22 base64url characters. (The generic
    /// initializer's code, unspecialised where it is called from another module, cost a post about 1 % of its CPU.)
    public init?(_ text: String) {
        var text = text
        guard let id = text.withUTF8({ SessionID(utf8: $0) }) else { return nil }
        self = id
    }

    /// Parses an id from its text's bytes (a path segment read where it lies); nil unless they are exactly 22
    /// base64url characters.
    public init?(utf8 bytes: UnsafeBufferPointer<UInt8>) {
        guard bytes.count == Self.length, let base = bytes.baseAddress else { return nil }
        for byte in bytes where !Self.isBase64URL(byte) { return nil }
        // 22 characters carry 132 bits; the last one holds 2 bits of the id and 4 zero bits: A, Q, g or w.
        switch bytes[21] {
        case UInt8(ascii: "A"), UInt8(ascii: "Q"), UInt8(ascii: "g"), UInt8(ascii: "w"): break
        default: return nil
        }
        let raw = UnsafeRawPointer(base)
        first = UInt64(littleEndian: raw.loadUnaligned(as: UInt64.self))
        second = UInt64(littleEndian: raw.loadUnaligned(fromByteOffset: 8, as: UInt64.self))
        // The last six characters, then two zero bytes.
        var last: UInt64 = 0
        for index in 0..<6 { last |= UInt64(base[16 + index]) << UInt64(8 * index) }
        third = last
    }

    /// Hashed by its first 16 characters (96 of its random bits; equality still compares the whole id): the session
    /// table's lookup on every request hashes two words.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(first)
        hasher.combine(second)
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
