import FeedbackJSON
import Glibc
import Synchronization

/// The bytes of a crash-marks file (`CrashMarks`): a header, then a fixed number of slots, one per marking thread.
///
/// Header (`headerBytes`): magic `FHMARKS1` (8 bytes), the slot count and the slot size (UInt32 each), the pid of the
/// process that opened it (Int32), the fatal signal the process took (UInt8, 0 for none).
///
/// Slot (`slotBytes`, two cache lines, so no two threads share one): the depth (UInt8: nonzero while the thread is
/// inside hosted code, written last on entry and first on exit), the kind, the lengths of the session id and of the
/// detail, the fatal signal this thread took (each UInt8), the time entered (Int64 at offset 8), the session id
/// (`sessionBytes` at 16), the detail (`detailBytes` at 80). Integers are in the machine's byte order: the file is
/// read back by the next process on the same machine, never moved.
///
/// Concurrency: a slot is written by the one thread that holds it (and by the fault handler on that thread); the
/// header by whoever opens the file, and by the fault handler. Plain stores, ordered by release stores of the depth.
enum CrashMarkLayout {
    static let magic = Array("FHMARKS1".utf8)
    static let headerBytes = 128
    static let slotBytes = 128
    static let sessionBytes = 64
    static let detailBytes = 48

    // Header offsets.
    static let slotCountOffset = 8
    static let slotSizeOffset = 12
    static let pidOffset = 16
    static let faultSignalOffset = 20

    // Slot offsets.
    static let depthOffset = 0
    static let kindOffset = 1
    static let sessionLengthOffset = 2
    static let detailLengthOffset = 3
    static let signalOffset = 4
    static let enteredOffset = 8
    static let sessionOffset = 16
    static let detailOffset = 80

    /// The file's size for `slots` slots.
    static func fileBytes(slots: Int) -> Int { headerBytes + slots * slotBytes }

    /// Slot `index` of the mapping at `base`.
    static func slot(_ index: Int, of base: UnsafeMutableRawPointer) -> UnsafeMutableRawPointer {
        base + headerBytes + index * slotBytes
    }

    /// Whether the header at `base` is one this layout wrote for `slots` slots.
    static func isValid(_ base: UnsafeRawPointer, slots: Int) -> Bool {
        UnsafeRawBufferPointer(start: base, count: magic.count).elementsEqual(magic)
            && base.loadUnaligned(fromByteOffset: slotCountOffset, as: UInt32.self) == UInt32(slots)
            && base.loadUnaligned(fromByteOffset: slotSizeOffset, as: UInt32.self) == UInt32(slotBytes)
    }

    /// Writes a fresh header (no fault) for `slots` slots, opened by this process.
    static func writeHeader(_ base: UnsafeMutableRawPointer, slots: Int) {
        magic.withUnsafeBytes { base.copyMemory(from: $0.baseAddress!, byteCount: $0.count) }
        base.storeBytes(of: UInt32(slots), toByteOffset: slotCountOffset, as: UInt32.self)
        base.storeBytes(of: UInt32(slotBytes), toByteOffset: slotSizeOffset, as: UInt32.self)
        base.storeBytes(of: getpid(), toByteOffset: pidOffset, as: Int32.self)
        base.storeBytes(of: 0, toByteOffset: faultSignalOffset, as: UInt8.self)
    }

    /// The slot's depth byte, as an atomic.
    static func depth(_ slot: UnsafeMutableRawPointer) -> UnsafeMutablePointer<Atomic<UInt8>> {
        (slot + depthOffset).assumingMemoryBound(to: Atomic<UInt8>.self)
    }

    /// Writes a mark into the calling thread's `slot` and sets it: the fields first, then the depth, one deeper.
    /// A mark entered inside another replaces its fields (the innermost code is what runs); its depth byte is cleared
    /// while they change, so a process dying meanwhile never leaves half of one mark and half of another.
    @inline(__always)
    static func enter(
        _ slot: UnsafeMutableRawPointer,
        session: String,
        kind: CrashMark.Kind,
        detail: String,
        at time: Int64
    ) {
        enter(slot, session: session, kind: kind, at: time) { copy(detail, to: $0, capacity: detailBytes) }
    }

    /// `enter` with the detail `#` and `revision` in decimal, written into the slot as digits (no string is made:
    /// a reduce marks its revision on every step).
    @inline(__always)
    static func enter(
        _ slot: UnsafeMutableRawPointer,
        session: String,
        kind: CrashMark.Kind,
        revision: UInt64,
        at time: Int64
    ) {
        enter(slot, session: session, kind: kind, at: time) { target in
            let bytes = target.assumingMemoryBound(to: UInt8.self)
            bytes[0] = UInt8(ascii: "#")
            return UInt8(1 + DecimalText.write(revision, to: bytes + 1))  // at most 21 bytes, within `detailBytes`
        }
    }

    @inline(__always)
    private static func enter(
        _ slot: UnsafeMutableRawPointer,
        session: String,
        kind: CrashMark.Kind,
        at time: Int64,
        detail writeDetail: (UnsafeMutableRawPointer) -> UInt8
    ) {
        let depth = depth(slot)
        let outer = depth.pointee.load(ordering: .relaxed)
        if outer != 0 { depth.pointee.store(0, ordering: .releasing) }
        slot.storeBytes(of: kind.rawValue, toByteOffset: kindOffset, as: UInt8.self)
        slot.storeBytes(of: 0, toByteOffset: signalOffset, as: UInt8.self)
        slot.storeBytes(of: time, toByteOffset: enteredOffset, as: Int64.self)
        let sessionLength = copy(session, to: slot + sessionOffset, capacity: sessionBytes)
        slot.storeBytes(of: sessionLength, toByteOffset: sessionLengthOffset, as: UInt8.self)
        let detailLength = writeDetail(slot + detailOffset)
        slot.storeBytes(of: detailLength, toByteOffset: detailLengthOffset, as: UInt8.self)
        depth.pointee.store(outer == .max ? outer : outer + 1, ordering: .releasing)
    }

    /// Leaves the innermost mark of the calling thread's `slot`: one shallower; at 0 the thread is outside.
    @inline(__always)
    static func leave(_ slot: UnsafeMutableRawPointer) {
        let depth = depth(slot)
        let inside = depth.pointee.load(ordering: .relaxed)
        if inside != 0 { depth.pointee.store(inside - 1, ordering: .releasing) }
    }

    /// Copies at most `capacity` bytes of `text`'s UTF-8 to `target`; returns how many.
    @inline(__always)
    private static func copy(_ text: String, to target: UnsafeMutableRawPointer, capacity: Int) -> UInt8 {
        let copied = text.utf8.withContiguousStorageIfAvailable { bytes -> Int in
            let count = min(bytes.count, capacity)
            if count > 0 { target.copyMemory(from: bytes.baseAddress!, byteCount: count) }
            return count
        }
        if let copied { return UInt8(copied) }
        var count = 0
        for byte in text.utf8.prefix(capacity) {
            target.storeBytes(of: byte, toByteOffset: count, as: UInt8.self)
            count += 1
        }
        return UInt8(count)
    }

    /// The mark in `slot` when its depth is nonzero (the thread was inside when the file was last written).
    static func mark(in slot: UnsafeMutableRawPointer) -> CrashMark? {
        guard slot.load(fromByteOffset: depthOffset, as: UInt8.self) != 0 else { return nil }
        let kind = CrashMark.Kind(rawValue: slot.load(fromByteOffset: kindOffset, as: UInt8.self)) ?? .reduce
        let sessionLength = min(Int(slot.load(fromByteOffset: sessionLengthOffset, as: UInt8.self)), sessionBytes)
        let detailLength = min(Int(slot.load(fromByteOffset: detailLengthOffset, as: UInt8.self)), detailBytes)
        let signal = slot.load(fromByteOffset: signalOffset, as: UInt8.self)
        return CrashMark(
            session: String(
                decoding: UnsafeRawBufferPointer(start: slot + sessionOffset, count: sessionLength),
                as: UTF8.self
            ),
            kind: kind,
            detail: String(
                decoding: UnsafeRawBufferPointer(start: slot + detailOffset, count: detailLength),
                as: UTF8.self
            ),
            enteredAt: slot.load(fromByteOffset: enteredOffset, as: Int64.self),
            signal: signal == 0 ? nil : Int32(signal)
        )
    }

    /// Clears `slot` (depth first).
    static func clear(_ slot: UnsafeMutableRawPointer) {
        depth(slot).pointee.store(0, ordering: .releasing)
        (slot + 1).initializeMemory(as: UInt8.self, repeating: 0, count: slotBytes - 1)
    }
}
