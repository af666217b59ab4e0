#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// What a JWT's header says about its key, `alg` and `kid`, read before a key is chosen (`KeyRing`). A value type.
package struct TokenHeader: Decodable, Sendable {
    package var alg: String?
    package var kid: String?

    /// The header of a compact JWT (`header.payload.signature`); nil unless there are three parts and the first is
    /// base64url JSON whose `alg` and `kid`, when present, are strings (jwt-kit refuses any other as malformed).
    package init?(token: String) {
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let json = Self.base64URLDecoded(parts[0]),
            let header = try? JSONDecoder().decode(TokenHeader.self, from: json)
        else { return nil }
        self = header
    }

    /// Base64url (RFC 4648 §5), padded or not.
    private static func base64URLDecoded(_ text: Substring) -> Data? {
        var bytes = text.utf8.map { byte in
            switch byte {
            case UInt8(ascii: "-"): UInt8(ascii: "+")
            case UInt8(ascii: "_"): UInt8(ascii: "/")
            default: byte
            }
        }
        while bytes.last == UInt8(ascii: "=") { bytes.removeLast() }
        bytes += Array(repeating: UInt8(ascii: "="), count: (4 - bytes.count % 4) % 4)
        return Data(base64Encoded: String(decoding: bytes, as: UTF8.self))
    }
}
