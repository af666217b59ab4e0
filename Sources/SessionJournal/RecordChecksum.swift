internal import CZlib

/// CRC-32 over a record's key, number and payload, stored beside it so that recovery notices a changed byte
/// that SQLite's page structure does not cover (SQLite has no checksums on row contents).
///
/// Concurrency: a value, used by one thread.
package struct RecordChecksum {
    private var crc: UInt = 0

    /// Sum of a record written from Swift values.
    static func of(_ key: String, _ number: UInt64, _ payloads: String...) -> Int64 {
        var sum = RecordChecksum()
        sum.add(key)
        sum.add(number)
        for payload in payloads {
            sum.add(payload)
        }
        return sum.value
    }

    /// The number folded into an event's sum: its revision with the origin in the top bit.
    static func eventNumber(_ revision: UInt64, _ origin: Int) -> UInt64 {
        revision ^ (UInt64(origin) << 63)
    }

    var value: Int64 { Int64(crc) }

    mutating func add(_ text: String) {
        var text = text
        text.withUTF8 { add(UnsafeRawBufferPointer($0)) }
    }

    mutating func add(_ number: UInt64) {
        var little = number.littleEndian
        withUnsafeBytes(of: &little) { add($0) }
    }

    mutating func add(_ bytes: UnsafeRawBufferPointer) {
        // An empty field still separates its neighbours: a length prefix keeps ("ab","c") apart from ("a","bc").
        var length = UInt32(bytes.count).littleEndian
        withUnsafeBytes(of: &length) { raw in
            crc = UInt(crc32(uLong(crc), raw.baseAddress!.assumingMemoryBound(to: Bytef.self), uInt(raw.count)))
        }
        guard let base = bytes.baseAddress, !bytes.isEmpty else { return }
        crc = UInt(crc32(uLong(crc), base.assumingMemoryBound(to: Bytef.self), uInt(bytes.count)))
    }
}
