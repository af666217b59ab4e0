import Crypto
import SessionRuntime

/// The fingerprints of idempotent requests' bodies (`BodyFingerprinting`): the first 8 bytes of the body's
/// HMAC-SHA256 under the journal's 16-byte key, read little-endian, 1 in place of 0 (which marks an unknown
/// fingerprint). swift-crypto's keyed hash, so the service has no hash of its own to keep.
///
/// Concurrency: an immutable value.
package struct KeyedFingerprints: BodyFingerprinting {
    private let key: SymmetricKey

    /// Fingerprints keyed with `key`.
    package init(key: [UInt8]) {
        self.key = SymmetricKey(data: key)
    }

    package func fingerprint(_ body: [UInt8]) -> UInt64 {
        let code = HMAC<SHA256>.authenticationCode(for: body, using: key)
        let value = code.withUnsafeBytes { bytes in
            (0..<8).reduce(UInt64(0)) { $0 | UInt64(bytes[$1]) << (8 * UInt64($1)) }
        }
        return value == 0 ? 1 : value
    }
}
