internal import CZlib

/// CRC-32 over a record's key, number and payload, stored beside it so that recovery notices a changed byte
/// that SQLite's page structure does not cover (SQLite has no checksums on row contents).
///
/// Concurrency: a value, used by one thread.
package struct RecordChecksum {
    private var crc: UInt = 0
    /// Small fields (lengths, numbers, short texts) gathered for one `crc32` call: CRC-32 runs over a stream, so the
    /// sum is the one field by field would give, for a few calls a record instead of two a field (one for a posted
    /// event's record: its session id, number, event and stamp fit).
    private typealias Eight = (UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64)
    private var gathered: (Eight, Eight) = ((0, 0, 0, 0, 0, 0, 0, 0), (0, 0, 0, 0, 0, 0, 0, 0))
    private var gatheredCount = 0
    private static let room = 128

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

    var value: Int64 {
        var sum = self
        sum.flush()
        return Int64(sum.crc)
    }

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
        withUnsafeBytes(of: &length) { gather($0) }
        guard !bytes.isEmpty else { return }
        gather(bytes)
    }

    private mutating func gather(_ bytes: UnsafeRawBufferPointer) {
        if gatheredCount + bytes.count > Self.room {
            flush()
            if bytes.count > Self.room {
                crc = Self.crc(crc, bytes)
                return
            }
        }
        let at = gatheredCount
        withUnsafeMutableBytes(of: &gathered) { room in
            room.baseAddress!.advanced(by: at).copyMemory(from: bytes.baseAddress!, byteCount: bytes.count)
        }
        gatheredCount = at + bytes.count
    }

    private mutating func flush() {
        let count = gatheredCount
        guard count > 0 else { return }
        let sum = withUnsafeBytes(of: &gathered) { Self.crc(crc, UnsafeRawBufferPointer(rebasing: $0[..<count])) }
        crc = sum
        gatheredCount = 0
    }

    /// CRC-32 of `bytes` alone: what a checksum of fields laid out one after another (each as `add` lays it out) is.
    static func checksum(_ bytes: UnsafeRawBufferPointer) -> UInt {
        crc(0, bytes)
    }

    private static func crc(_ crc: UInt, _ bytes: UnsafeRawBufferPointer) -> UInt {
        UInt(crc32(uLong(crc), bytes.baseAddress!.assumingMemoryBound(to: Bytef.self), uInt(bytes.count)))
    }
}
