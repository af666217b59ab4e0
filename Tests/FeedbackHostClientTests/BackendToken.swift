import Crypto
import Foundation

/// A token as a deployment's backend signs one (HS256 with a secret the server lists in `--auth-keys`): the session,
/// the scope and the expiry, nothing else (docs/API.md, "Tokens").
struct BackendToken {
    let secret: [UInt8]

    /// A new random secret of 32 bytes, as hex text (what the key file holds).
    static func randomSecret() -> [UInt8] {
        Array((0..<32).map { _ in String(format: "%02x", UInt8.random(in: 0...255)) }.joined().utf8)
    }

    /// A token for `session` with `scope`, valid until `expiry`.
    func token(session: String, scope: String, expiry: Date) -> String {
        let header = Self.base64URL(Data(#"{"alg":"HS256","typ":"JWT"}"#.utf8))
        let payload = Self.base64URL(
            Data(#"{"sid":"\#(session)","scope":"\#(scope)","exp":\#(Int(expiry.timeIntervalSince1970))}"#.utf8)
        )
        let signature = HMAC<SHA256>.authenticationCode(
            for: Data("\(header).\(payload)".utf8),
            using: SymmetricKey(data: secret)
        )
        return "\(header).\(payload).\(Self.base64URL(Data(signature)))"
    }

    private static func base64URL(_ data: Data) -> String {
        data.base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }
}
