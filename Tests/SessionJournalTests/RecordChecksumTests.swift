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

/// An event's sum is taken in one call where its fields fit a buffer on the stack: it must be the sum the field by
/// field way gives, for every stamp and for texts on both sides of the buffer's room.
@Suite struct EventChecksumTests {
    private static func fieldByField(
        _ id: String,
        _ revision: UInt64,
        _ origin: Int,
        _ event: String,
        _ stamp: EventStamp
    ) -> Int64 {
        var sum = RecordChecksum()
        sum.add(id)
        sum.add(RecordChecksum.eventNumber(revision, origin))
        sum.add(event)
        if stamp.isChecksummed { sum.add(stamp) }
        return sum.value
    }

    @Test func anEventsSumIsWhatEveryBuildComputed() {
        // Computed independently (Python's zlib.crc32 over the fields laid out as the journal lays them out).
        let stamped = EventStamp(version: 2, time: 1_000, stateChecksum: 7, feedback: "ticker")
        #expect(RecordChecksum.event("s", 3, 1, #"{"type":"tick"}"#, stamped) == 604_004_737)
        #expect(RecordChecksum.event("s", 3, 0, #"{"type":"tick"}"#, EventStamp()) == 489_540_401)
    }

    @Test(arguments: [0, 1, 20, 150, 400, 460, 470, 480, 490, 2_000])
    func anEventSumsAsItsFieldsDo(eventLength: Int) {
        let stamps = [
            EventStamp(),
            EventStamp(version: 3),
            EventStamp(version: 1, time: 1_790_000_000_123),
            EventStamp(version: 2, time: 5, stateChecksum: 0xDEAD_BEEF_0123_4567),
            EventStamp(version: 1, time: nil, stateChecksum: 0),
            EventStamp(version: 4, time: -1, stateChecksum: UInt64.max, feedback: "fetch"),
        ]
        let event = #"{"type":""# + String(repeating: "é", count: eventLength / 2) + #""}"#
        for id in ["", "s", "01JDZ3K4Q5R6S7T8V9W0X1Y2Z3", String(repeating: "i", count: 200)] {
            for stamp in stamps {
                for (revision, origin) in [(UInt64(0), 0), (1, 1), (UInt64.max, 0)] {
                    #expect(
                        RecordChecksum.event(id, revision, origin, EventText(event), stamp)
                            == Self.fieldByField(id, revision, origin, event, stamp)
                    )
                }
            }
        }
    }
}
