import Glibc
import Synchronization

/// The fault handler of `CrashMarks`: on a fatal signal it writes the signal into the faulting thread's slot and the
/// file's header, then hands the signal on to whoever handled it before (Swift's backtracer, or the default action),
/// so the process dies as it would have. A mark with a signal is the code that killed the process; a mark without
/// one was a bystander (another thread faulted, or the process was killed).
///
/// Installed once per process, for SIGILL and SIGTRAP (Swift's traps: `ud2` on x86_64, `brk` on arm64), SIGSEGV, SIGBUS,
/// SIGFPE and SIGABRT, on the alternate signal stack (marking threads get one, `ThreadMark`). The handler only loads
/// atomics, reads its thread's key and stores bytes, then restores the previous action: all async-signal-safe.
///
/// Concurrency: `install` and `register` from any thread (a `Mutex`, and atomics the handler reads).
enum CrashMarkFaults {
    static let signals: [Int32] = [SIGILL, SIGTRAP, SIGSEGV, SIGBUS, SIGFPE, SIGABRT]

    /// The registered marks' thread-specific key plus one; 0 for none.
    private static let key = Atomic<UInt32>(0)
    /// The registered marks' mapping (its header), as an address; 0 for none.
    private static let header = Atomic<UInt>(0)
    /// Whether the handler is installed.
    private static let installed = Mutex(false)
    /// The actions the handler replaced, by signal number below 32 (made once, never freed: the handler reads them).
    nonisolated(unsafe) private static let previous: UnsafeMutablePointer<sigaction> = {
        let actions = UnsafeMutablePointer<sigaction>.allocate(capacity: 32)
        actions.initialize(repeating: sigaction(), count: 32)
        return actions
    }()

    /// Makes the faults of threads inside marks land in the marks with key `key` and mapping `base` (the last
    /// registered wins: one process, one marks file), installing the handler the first time.
    static func register(key: pthread_key_t, base: UnsafeMutableRawPointer) {
        header.store(UInt(bitPattern: base), ordering: .releasing)
        Self.key.store(key + 1, ordering: .releasing)
        installed.withLock { installed in
            guard !installed else { return }
            let actions = previous
            for signal in signals {
                var action = sigaction()
                action.__sigaction_handler.sa_sigaction = handle
                action.sa_flags = SA_SIGINFO | SA_ONSTACK
                sigemptyset(&action.sa_mask)
                sigaction(signal, &action, actions + Int(signal))
            }
            installed = true
        }
    }

    /// Stops recording faults into the marks with `key` when they are the registered ones (they are closing).
    static func unregister(key: pthread_key_t) {
        if Self.key.compareExchange(expected: key + 1, desired: 0, ordering: .acquiringAndReleasing).exchanged {
            header.store(0, ordering: .releasing)
        }
    }

    private typealias Handler =
        @convention(c) (Int32, UnsafeMutablePointer<siginfo_t>?, UnsafeMutableRawPointer?) -> Void

    private static let handle: Handler = { signal, info, _ in CrashMarkFaults.record(signal, info) }

    /// The handler's work, on the faulting thread (on its alternate signal stack).
    private static func record(_ signal: Int32, _ info: UnsafeMutablePointer<siginfo_t>?) {
        let key = key.load(ordering: .acquiring)
        if key != 0, let base = UnsafeMutableRawPointer(bitPattern: header.load(ordering: .acquiring)) {
            let number = UInt8(truncatingIfNeeded: signal)
            if let record = pthread_getspecific(key - 1),
                let slot = record.assumingMemoryBound(to: ThreadMark.self).pointee.slot
            {
                slot.storeBytes(of: number, toByteOffset: CrashMarkLayout.signalOffset, as: UInt8.self)
            }
            base.storeBytes(of: number, toByteOffset: CrashMarkLayout.faultSignalOffset, as: UInt8.self)
        }
        // Hand on: a fault (a trap, a bad access) happens again when the handler returns and reaches the previous
        // action; a signal sent (kill, raise, abort) does not, so it is raised again, delivered once this returns.
        sigaction(signal, previous + Int(signal), nil)
        if (info?.pointee.si_code ?? 0) <= 0 { raise(signal) }
    }
}
