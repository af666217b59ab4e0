import Glibc

/// A thread's hold on one crash-marks slot: the value of `CrashMarks`' thread-specific key, made on the thread's first
/// mark and released by the key's destructor when the thread exits.
///
/// Concurrency: read only by its own thread (`enter`, `leave`, the fault handler running on that thread) and by the
/// destructor on that thread; never shared.
struct ThreadMark {
    /// The thread's slot in the mapping; nil when none was free (the thread marks nothing).
    var slot: UnsafeMutableRawPointer?
    /// The slot's index, for giving it back.
    var index: Int
    /// The slots it was taken from (retained by this record).
    var slots: Unmanaged<CrashMarkSlots>
    /// The alternate signal stack installed for this thread, if this record installed one.
    var signalStack: UnsafeMutableRawPointer?

    /// Bytes of the alternate signal stack a marking thread gets: the fault handler, and the handler it passes the
    /// signal on to (Swift's backtracer), run there when a thread overflows its own stack.
    static let signalStackBytes = 64 * 1024

    /// A record on the heap for the calling thread; with `signalStack`, the thread also gets an alternate signal stack
    /// when it has none, so that a fault from a stack overflow still reaches the fault handler.
    static func make(
        slot: UnsafeMutableRawPointer?,
        index: Int,
        slots: CrashMarkSlots,
        signalStack: Bool
    ) -> UnsafeMutablePointer<ThreadMark> {
        var stack: UnsafeMutableRawPointer?
        if signalStack, slot != nil {
            var current = stack_t()
            if sigaltstack(nil, &current) == 0, current.ss_flags & Int32(SS_DISABLE) != 0 {
                let memory = UnsafeMutableRawPointer.allocate(byteCount: signalStackBytes, alignment: 16)
                var installed = stack_t(ss_sp: memory, ss_flags: 0, ss_size: signalStackBytes)
                if sigaltstack(&installed, nil) == 0 { stack = memory } else { memory.deallocate() }
            }
        }
        let record = UnsafeMutablePointer<ThreadMark>.allocate(capacity: 1)
        record.initialize(
            to: ThreadMark(slot: slot, index: index, slots: .passRetained(slots), signalStack: stack)
        )
        return record
    }

    /// The key's destructor: the exiting thread's slot is cleared and given back, its signal stack removed.
    static let threadExit: @convention(c) (UnsafeMutableRawPointer?) -> Void = { raw in
        guard let record = raw?.assumingMemoryBound(to: ThreadMark.self) else { return }
        let mark = record.pointee
        if let slot = mark.slot {
            CrashMarkLayout.clear(slot)
            mark.slots.takeUnretainedValue().give(mark.index)
        }
        if let memory = mark.signalStack {
            var disabled = stack_t(ss_sp: nil, ss_flags: Int32(SS_DISABLE), ss_size: 0)
            if sigaltstack(&disabled, nil) == 0 { memory.deallocate() }
        }
        mark.slots.release()
        record.deinitialize(count: 1)
        record.deallocate()
    }
}
