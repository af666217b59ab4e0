internal import CZlib
import FeedbackJSON

/// The fields a record's checksum is taken over, one after another: each a little-endian 32-bit length, then its
/// bytes. `RecordChecksum` sums them as they come; `ChecksumLayout` lays a record's out in one buffer to be summed in
/// one call. The layout, and the fields of an event's row, are written here once for both.
protocol ChecksumFields {
    /// Takes `bytes` as they are, without a length.
    mutating func take(_ bytes: UnsafeRawBufferPointer)
    /// Takes `word`'s little-endian bytes.
    mutating func take<Word: FixedWidthInteger>(word: Word)
}

extension ChecksumFields {
    mutating func add(_ bytes: UnsafeRawBufferPointer) {
        // An empty field still separates its neighbours: a length prefix keeps ("ab","c") apart from ("a","bc").
        take(word: UInt32(bytes.count))
        guard !bytes.isEmpty else { return }
        take(bytes)
    }

    mutating func add(_ text: String) {
        text.withUTF8Bytes { add(UnsafeRawBufferPointer($0)) }
    }

    mutating func add(_ number: UInt64) {
        take(word: UInt32(8))
        take(word: number)
    }

    mutating func add(_ stamp: EventStamp) {
        add(UInt64(stamp.version))
        add(UInt64(bitPattern: stamp.time ?? -1))
        add(stamp.stateChecksum ?? 0)
        add(stamp.stateChecksum == nil ? 0 : 1)
        // Only when set, so that the rows written before feedbacks were recorded keep their sums.
        if let feedback = stamp.feedback { add("f" + feedback) }
    }

    /// An event's row: its session's id, its number (`RecordChecksum.eventNumber`), its text and its stamp when the
    /// stamp is not what an older row reads as.
    mutating func addEvent(
        id: UnsafeRawBufferPointer,
        number: UInt64,
        event: UnsafeRawBufferPointer,
        stamp: EventStamp
    ) {
        add(id)
        add(number)
        add(event)
        if stamp.isChecksummed { add(stamp) }
    }
}

/// A record's fields laid out one after another in memory the caller holds (room enough for them), for one `crc32`
/// call over them all (`RecordChecksum.checksum`).
struct ChecksumLayout: ChecksumFields {
    private let start: UnsafeMutableRawPointer
    private var end: UnsafeMutableRawPointer

    init(in room: UnsafeMutableRawPointer) {
        start = room
        end = room
    }

    /// The bytes laid out so far.
    var bytes: UnsafeRawBufferPointer { UnsafeRawBufferPointer(start: start, count: end - start) }

    mutating func take(_ bytes: UnsafeRawBufferPointer) {
        end.copyMemory(from: bytes.baseAddress!, byteCount: bytes.count)
        end += bytes.count
    }

    mutating func take<Word: FixedWidthInteger>(word: Word) {
        end.storeBytes(of: word.littleEndian, as: Word.self)
        end += MemoryLayout<Word>.size
    }

    /// The room an event's fields take: three length-prefixed texts at most and up to five numbers.
    static func room(id: Int, event: Int, stamp: EventStamp) -> Int {
        guard stamp.isChecksummed else { return 4 + id + 12 + 4 + event }
        return 4 + id + 12 + 4 + event + 4 * 12 + (stamp.feedback.map { 4 + 1 + $0.utf8.count } ?? 0)
    }
}

/// CRC-32 over a record's key, number and payload, stored beside it so that recovery notices a changed byte
/// that SQLite's page structure does not cover (SQLite has no checksums on row contents).
///
/// Concurrency: a value, used by one thread.
package struct RecordChecksum: ChecksumFields {
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

    mutating func take(_ bytes: UnsafeRawBufferPointer) {
        gather(bytes)
    }

    mutating func take<Word: FixedWidthInteger>(word: Word) {
        withUnsafeBytes(of: word.littleEndian) { gather($0) }
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

    /// CRC-32 of fields laid out in one buffer (`ChecksumLayout`): the sum `RecordChecksum` makes of them one by one.
    static func checksum(_ layout: ChecksumLayout) -> Int64 {
        Int64(crc(0, layout.bytes))
    }

    private static func crc(_ crc: UInt, _ bytes: UnsafeRawBufferPointer) -> UInt {
        UInt(crc32(uLong(crc), bytes.baseAddress!.assumingMemoryBound(to: Bytef.self), uInt(bytes.count)))
    }
}
