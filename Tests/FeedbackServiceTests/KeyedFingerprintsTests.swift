import Testing

@testable import FeedbackService

/// The fingerprints of idempotent bodies: swift-crypto's HMAC-SHA256, its first 8 bytes little-endian.
struct KeyedFingerprintsTests {
    /// RFC 4231, test case 1: key 0x0b × 20, data "Hi There", HMAC-SHA256 b0344c61d8db3853….
    @Test func isTheFirstEightBytesOfTheHMAC() {
        let fingerprints = KeyedFingerprints(key: Array(repeating: 0x0b, count: 20))
        #expect(fingerprints.fingerprint(Array("Hi There".utf8)) == 0x5338_dbd8_614c_34b0)
    }

    @Test func sameKeySameFingerprintOtherKeyOrBodyAnother() {
        let body = Array(#"{"type":"add","amount":7}"#.utf8)
        let key: [UInt8] = (0..<16).map { UInt8($0 * 7) }
        #expect(KeyedFingerprints(key: key).fingerprint(body) == KeyedFingerprints(key: key).fingerprint(body))
        #expect(
            KeyedFingerprints(key: key).fingerprint(body) != KeyedFingerprints(key: Array(0..<16)).fingerprint(body)
        )
        #expect(KeyedFingerprints(key: key).fingerprint(body) != KeyedFingerprints(key: key).fingerprint(body + [0x20]))
    }
}
