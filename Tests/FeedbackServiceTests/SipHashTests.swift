import Testing

@testable import FeedbackService

/// Vectors from the reference implementation (Aumasson and Bernstein, `vectors.h`): key 00 01 … 0f, message
/// 00 01 … of each length.
struct SipHashTests {
    private let reference = SipHash(key: Array(0..<16))

    @Test func matchesTheReferenceVectors() {
        #expect(reference.hash([]) == 0x726f_db47_dd0e_0e31)
        #expect(reference.hash([0]) == 0x74f8_39c5_93dc_67fd)
        #expect(reference.hash(Array(0..<8)) == 0x93f5_f579_9a93_2462)
        #expect(reference.hash(Array(0..<15)) == 0xa129_ca61_49be_45e5)
    }

    @Test func sameKeySameFingerprintOtherKeyAnother() {
        let body = Array(#"{"type":"add","amount":7}"#.utf8)
        let key: [UInt8] = (0..<16).map { UInt8($0 * 7) }
        #expect(SipHash(key: key).hash(body) == SipHash(key: key).hash(body))
        #expect(SipHash(key: key).hash(body) != SipHash(key: Array(0..<16)).hash(body))
        #expect(SipHash(key: key).hash(body) != SipHash(key: key).hash(body + [0x20]))
    }
}
