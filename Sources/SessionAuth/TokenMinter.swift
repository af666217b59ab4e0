import Crypto
import JWTKit
package import SessionRuntime

#if canImport(FoundationEssentials)
package import FoundationEssentials
#else
package import Foundation
#endif

/// Signs the server's own tokens (HS256, with the key of `--auth-key-file`): one per scope for a new session, and
/// fresh ones on request. Each carries the session's id, epoch and token generation, and expires after `lifetime`.
///
/// Synchronous (it runs inside the creation handler): the HMAC comes from swift-crypto, the payload encoding from
/// jwt-kit's serializer. Immutable: thread-safe.
package struct TokenMinter: Sendable {
    /// The key's id, `fh-` and the first 8 bytes of its SHA-256 in hex: it names the key in the token's header, so
    /// that after a rotation the previous key (`--auth-previous-key-file`) still checks the tokens it signed.
    let kid: String
    private let key: SymmetricKey
    let lifetime: Duration

    package init(secret: [UInt8], lifetime: Duration) {
        kid = Self.kid(of: secret)
        key = SymmetricKey(data: secret)
        self.lifetime = lifetime
    }

    package static func kid(of secret: [UInt8]) -> String {
        "fh-"
            + SHA256.hash(data: secret).prefix(8).map { byte in
                let hex = String(byte, radix: 16)
                return byte < 16 ? "0" + hex : hex
            }.joined()
    }

    /// A token of `scope` for a session, and when it expires (seconds since 1970).
    package func token(
        for id: SessionID,
        scope: AccessScope,
        epoch: UInt64,
        generation: UInt64,
        now: Date = Date()
    ) -> (token: String, expiry: Double) {
        let expiry = now.addingTimeInterval(Double(lifetime.components.seconds))
        let claims = TokenClaims(
            expiry: Date(timeIntervalSince1970: expiry.timeIntervalSince1970.rounded(.down)),
            sid: id.description,
            scope: scope,
            epoch: epoch,
            generation: generation,
            issuedAt: Date(timeIntervalSince1970: now.timeIntervalSince1970.rounded(.down))
        )
        let header = SessionID.base64URL(Array(#"{"alg":"HS256","typ":"JWT","kid":"\#(kid)"}"#.utf8))
        // The claims are plain strings and numbers: encoding cannot fail.
        let payload = (try? DefaultJWTSerializer().serialize(claims)).map { Array($0) } ?? []
        let input = Array(header.utf8) + [UInt8(ascii: ".")] + payload
        let signature = HMAC<SHA256>.authenticationCode(for: input, using: key)
        let token = String(decoding: input, as: UTF8.self) + "." + SessionID.base64URL(Array(signature))
        return (token, expiry.timeIntervalSince1970.rounded(.down))
    }
}
