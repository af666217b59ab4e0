import Testing

@testable import SessionJournal

/// A record's checksum is stored beside it: the sum of the same fields must never change, whatever the code that
/// computes it, or every journal written before would read back as damaged.
@Suite struct RecordChecksumTests {
    @Test func theSumOfKnownFieldsIsWhatEveryBuildComputed() {
        // Computed independently (Python's zlib.crc32 over each field's little-endian 32-bit length, then its bytes),
        // with short fields (summed with their prefix in one call), an empty one and one longer than the stack room.
        let sum = RecordChecksum.of("session-abc", 7, #"{"type":"increment"}"#, "", String(repeating: "x", count: 300))
        #expect(sum == 3_099_472_156)
    }
}
