import CEpoll

/// Cache prefetches for the loops of a large fan-out, which meet every subscriber's objects cold: the kernel's sends
/// between two subscribers evict them, and another core's shard last wrote each stream's counters. Asking for the
/// next objects' lines while the current one is worked on hides most of those misses (a 10,000-subscriber fan-out's
/// write loop spent most of its own time waiting on them). A prefetch only hints: it never faults, whatever the
/// address, and changes nothing a program can observe but its speed.
package enum Prefetch {
    /// Asks for the first `lines` cache lines of the object at `index` of `references` (nothing for nil or past the
    /// end): a buffer of class references or of optional ones, each one pointer. The address is read as bits, not
    /// as a reference: a retain would write the object's reference count, a wait on the very line asked for.
    @inlinable
    package static func object<Element>(at index: Int, in references: UnsafeBufferPointer<Element>, lines: Int = 2) {
        precondition(MemoryLayout<Element>.size == MemoryLayout<UnsafeRawPointer>.size, "not a buffer of references")
        guard index >= 0, index < references.count, let base = references.baseAddress else { return }
        guard let object = UnsafeRawPointer(base + index).load(as: UnsafeRawPointer?.self) else { return }
        Self.lines(object, lines)
    }

    /// Asks for the first `count` cache lines at `address`.
    @usableFromInline
    static func lines(_ address: UnsafeRawPointer, _ count: Int) {
        for line in 0..<count { cepoll_prefetch(address + line &* 64) }
    }
}

extension ResponseStream {
    /// Asks for this stream's lines (its fields and its counters' lock) without waiting for them.
    package func prefetch() {
        Prefetch.lines(UnsafeRawPointer(Unmanaged.passUnretained(self).toOpaque()), 2)
    }
}
