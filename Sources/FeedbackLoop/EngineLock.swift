public import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A loop's lock and engine-ownership flags in one 32-bit word, so that an uncontended step costs one
/// compare-and-swap to lock, one plain store to unlock (and claim the engine), and one compare-and-swap to
/// release the engine.
///
/// Bits: `locked` guards the loop's core (state, revision, queue, observers); `owned` says that a thread owns
/// the engine (reduces and notifies); `pending` says that something was queued (or a stop requested) while the
/// engine was owned. While `locked` is set only the holder changes the word, so unlocking is a release store.
/// The owner may drop `owned` without the lock only when neither `locked` nor `pending` is set.
/// Contended waiters spin briefly, then yield the processor: critical sections are a reduce and a few stores.
@usableFromInline
struct EngineLock: ~Copyable, Sendable {
    @usableFromInline
    static var locked: UInt32 { 1 }
    @usableFromInline
    static var owned: UInt32 { 2 }
    @usableFromInline
    static var pending: UInt32 { 4 }

    @usableFromInline
    let word = Atomic<UInt32>(0)

    @inlinable
    init() {}

    /// Locks; returns the flags (`owned`, `pending`) as they were.
    @inlinable
    @inline(__always)
    func lock() -> UInt32 {
        let current = word.load(ordering: .relaxed)
        if current & Self.locked == 0,
            word.compareExchange(expected: current, desired: current | Self.locked, ordering: .acquiring).exchanged
        {
            return current
        }
        return lockSlowly()
    }

    @usableFromInline
    func lockSlowly() -> UInt32 {
        var spins = 0
        while true {
            let current = word.load(ordering: .relaxed)
            if current & Self.locked == 0,
                word.compareExchange(expected: current, desired: current | Self.locked, ordering: .acquiring).exchanged
            {
                return current
            }
            spins += 1
            if spins > 100 { sched_yield() }
        }
    }

    /// Unlocks, leaving `flags` set.
    @inlinable
    @inline(__always)
    func unlock(_ flags: UInt32) {
        word.store(flags & ~Self.locked, ordering: .releasing)
    }

    /// The engine owner gives the engine up when nothing is pending; false means it must run the queue first.
    @inlinable
    @inline(__always)
    func releaseIfIdle() -> Bool {
        word.compareExchange(expected: Self.owned, desired: 0, ordering: .acquiringAndReleasing).exchanged
    }

    /// The one way to claim the engine, called under the lock with the flags `lock()` returned: when no thread owns
    /// the engine the caller takes it (true: it must now run the queue or shut down); otherwise `pending` tells
    /// the owner that something was queued (or a stop requested) and the caller leaves (false).
    @inlinable
    @inline(__always)
    static func claim(_ flags: inout UInt32) -> Bool {
        if flags & owned != 0 {
            flags |= pending
            return false
        }
        flags = owned
        return true
    }
}
