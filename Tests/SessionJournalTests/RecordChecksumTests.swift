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

/// The sum gathers small fields for one CRC call: for fields of every size around its room, it equals the CRC-32 of
/// the fields one after another (each a little-endian 32-bit length, then its bytes), computed here bit by bit.
@Suite struct RecordChecksumGatheringTests {
    private static func reference(_ fields: [[UInt8]]) -> Int64 {
        var crc: UInt32 = 0xFFFF_FFFF
        func feed(_ byte: UInt8) {
            crc ^= UInt32(byte)
            for _ in 0..<8 { crc = crc & 1 == 1 ? (crc >> 1) ^ 0xEDB8_8320 : crc >> 1 }
        }
        for field in fields {
            withUnsafeBytes(of: UInt32(field.count).littleEndian) { $0.forEach(feed) }
            field.forEach(feed)
        }
        return Int64(crc ^ 0xFFFF_FFFF)
    }

    @Test(arguments: [0, 1, 7, 8, 55, 56, 59, 60, 61, 63, 64, 65, 100, 300])
    func fieldsOfEverySizeSumAsOneStream(size: Int) {
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<20 {
            let fields = (0..<Int.random(in: 1...6, using: &generator)).map { index in
                (0..<(index == 0 ? size : Int.random(in: 0...70, using: &generator))).map { _ in
                    UInt8.random(in: 0...255, using: &generator)
                }
            }
            var sum = RecordChecksum()
            for field in fields { field.withUnsafeBytes { sum.add($0) } }
            #expect(sum.value == Self.reference(fields))
            // Reading the value does not end the sum: more fields go on from where it was.
            sum.add(UInt64(9))
            #expect(sum.value == Self.reference(fields + [withUnsafeBytes(of: UInt64(9).littleEndian) { Array($0) }]))
        }
    }
}
