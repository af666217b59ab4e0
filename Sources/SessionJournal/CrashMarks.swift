import Foundation
import Glibc
import Synchronization

/// Which session's hosted code each thread is inside, kept where a dying process leaves it: a small file in the data
/// directory (`fileName`), mapped `MAP_SHARED`, so that plain stores reach the page cache and outlive the process (not
/// the machine). The next start reads what the dead process left set (`leftBehind`) and quarantines those sessions
/// (issue 31): no journal write per reduce.
///
/// The file has a fixed number of slots (`defaultSlots` of `CrashMarkLayout.slotBytes`). A thread takes one on its
/// first `enter` (kept in a thread-specific key) and gives it back when it exits; when none is free it marks nothing,
/// never waits. `enter` writes the session, the kind, the detail and the time, then sets the slot's depth with a
/// release store; `leave` lowers it: no system call, no lock, no allocation. Marks nest (an activation's replayed
/// reduces inside its `activation` mark): the innermost's fields stand until the outermost is left. A process that
/// shuts down cleanly has left every mark it entered, so the file holds none set.
///
/// With `catchingFaults`, a fatal signal on a marking thread is written into its mark before the process dies
/// (`CrashMark.signal`, `CrashMarkFaults`): the mark that killed the process is told apart from the bystanders that
/// other threads were inside at the time.
///
/// The marks a dead process left stay in the file until `clearLeftBehind()`, which the caller calls once it has dealt
/// with them (quarantined their sessions, durably): a process that dies in between leaves them for the next start too.
///
/// Concurrency: `enter`, `leave` and `marking` may be called from any thread, each marking its own slot only.
/// `open`, `clearLeftBehind` and `close` from any thread; the slots' bookkeeping is behind a `Mutex` that only a
/// thread's first mark and its exit take. The mapping stays for the process's lifetime (threads may hold slots in
/// it); `close` releases the file's lock and stops marking. One process holds the file at a time (`flock`).
public final class CrashMarks: @unchecked Sendable {
    /// The file's name in the data directory.
    public static let fileName = "system-code.marks"
    /// Slots in a file made by `open` unless told otherwise: as many threads can be inside hosted code at once.
    public static let defaultSlots = 256
    /// Bytes of a session id a mark keeps (the service's ids have 22).
    public static let sessionBytes = CrashMarkLayout.sessionBytes
    /// Bytes of a mark's detail it keeps.
    public static let detailBytes = CrashMarkLayout.detailBytes

    /// Marks nothing and reads nothing: for a server without a data directory.
    public static let disabled = CrashMarks()

    /// The file's path; nil for `disabled`.
    public let path: String?
    /// The marks the last process left set: the hosted code its threads were inside when it died, read by `open`.
    public let leftBehind: [CrashMark]
    /// The fatal signal the last process took, when the fault handler saw one (inside a mark or not); nil when it
    /// took none (a clean exit, a SIGKILL) or none was caught.
    public let signalLeftBehind: Int32?

    private let base: UnsafeMutableRawPointer?
    private let key: pthread_key_t
    private let slots: CrashMarkSlots
    private let descriptor: Int32
    private let catchingFaults: Bool
    private let closed = Atomic(false)

    private init() {
        path = nil
        leftBehind = []
        signalLeftBehind = nil
        base = nil
        key = 0
        slots = CrashMarkSlots(count: 0, reserved: [])
        descriptor = -1
        catchingFaults = false
        closed.store(true, ordering: .relaxed)
    }

    private init(
        path: String,
        base: UnsafeMutableRawPointer,
        descriptor: Int32,
        slotCount: Int,
        left: [(slot: Int, mark: CrashMark)],
        signal: Int32?,
        catchingFaults: Bool
    ) throws(JournalError) {
        var key = pthread_key_t()
        guard pthread_key_create(&key, ThreadMark.threadExit) == 0 else {
            throw JournalError(.directory, "\(path): no thread-specific key left for the crash marks")
        }
        self.path = path
        self.base = base
        self.descriptor = descriptor
        self.key = key
        self.catchingFaults = catchingFaults
        leftBehind = left.map(\.mark)
        signalLeftBehind = signal
        slots = CrashMarkSlots(count: slotCount, reserved: Set(left.map(\.slot)))
        if catchingFaults { CrashMarkFaults.register(key: key, base: base) }
    }

    deinit { close() }

    /// Opens (or makes) `directory`'s marks file with `slots` slots: reads the marks the last process left set
    /// (`leftBehind`, kept in the file until `clearLeftBehind()`), and marks from then on. With `catchingFaults`,
    /// installs the fault handler (`CrashMarkFaults`) once per process. Throws `.locked` when another process (or
    /// another open `CrashMarks` of this one) holds the file, `.full` when the disk has no room for it (its blocks are
    /// allocated here, so a store never meets a full disk), `.directory` when it cannot be made.
    public static func open(
        directory: String,
        slots: Int = defaultSlots,
        catchingFaults: Bool = true
    ) throws(JournalError) -> CrashMarks {
        guard (1...65_536).contains(slots) else {
            throw JournalError(.configuration, "crash marks need 1 to 65536 slots, not \(slots)")
        }
        do {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        } catch {
            throw JournalError(.directory, "cannot create \(directory): \(error)")
        }
        let path = directory + "/" + fileName
        let descriptor = Glibc.open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else { throw JournalError(.directory, "cannot open \(path): \(Self.reason(errno))") }
        do throws(JournalError) {
            guard flock(descriptor, LOCK_EX | LOCK_NB) == 0 else {
                throw JournalError(
                    .locked,
                    "\(path) is in use by another process: one feedback-host per data directory"
                )
            }
            let (left, signal, reusable) = Self.read(descriptor, slots: slots)
            let bytes = CrashMarkLayout.fileBytes(slots: slots)
            if !reusable {
                // Another layout, damaged, or new: started afresh, the marks it held carried over.
                guard ftruncate(descriptor, 0) == 0, ftruncate(descriptor, off_t(bytes)) == 0 else {
                    throw JournalError(.directory, "cannot size \(path): \(Self.reason(errno))")
                }
            }
            let allocated = posix_fallocate(descriptor, 0, off_t(bytes))
            guard allocated == 0 else {
                throw JournalError(
                    allocated == ENOSPC ? .full : .directory,
                    "cannot allocate \(path): \(Self.reason(allocated))"
                )
            }
            guard
                let mapped = mmap(nil, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, descriptor, 0),
                mapped != MAP_FAILED
            else {
                throw JournalError(.directory, "cannot map \(path): \(Self.reason(errno))")
            }
            CrashMarkLayout.writeHeader(mapped, slots: slots)
            var kept: [(slot: Int, mark: CrashMark)] = []
            if reusable {
                kept = left
            } else {
                for (index, entry) in left.prefix(slots).enumerated() {
                    Self.restore(entry.mark, into: CrashMarkLayout.slot(index, of: mapped))
                    kept.append((index, entry.mark))
                }
            }
            return try CrashMarks(
                path: path,
                base: mapped,
                descriptor: descriptor,
                slotCount: slots,
                left: kept,
                signal: signal,
                catchingFaults: catchingFaults
            )
        } catch {
            Glibc.close(descriptor)
            throw error
        }
    }

    /// Marks the calling thread as inside `kind` of session `session` (`detail`: an event type or other short text)
    /// until the matching `leave()`, which must run on the same thread: around synchronous code (a reduce, a feedback's
    /// synchronous part), never across a suspension point, after which a task may resume on another thread. Does
    /// nothing when every slot is taken, or for `disabled`.
    public func enter(session: String, kind: CrashMark.Kind, detail: String) {
        guard let slot = currentSlot() else { return }
        CrashMarkLayout.enter(slot, session: session, kind: kind, detail: detail, at: Self.coarseMilliseconds())
    }

    /// `enter` with the detail `#revision` (what a reduce marks), its digits written straight into the slot.
    public func enter(session: String, kind: CrashMark.Kind, revision: UInt64) {
        guard let slot = currentSlot() else { return }
        CrashMarkLayout.enter(slot, session: session, kind: kind, revision: revision, at: Self.coarseMilliseconds())
    }

    /// The wall clock to the kernel's tick (a few milliseconds): when a mark was entered, read on every step.
    private static func coarseMilliseconds() -> Int64 {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME_COARSE, &now)
        return Int64(now.tv_sec) * 1000 + Int64(now.tv_nsec) / 1_000_000
    }

    /// Leaves the calling thread's innermost mark.
    public func leave() {
        guard base != nil, let record = pthread_getspecific(key),
            let slot = record.assumingMemoryBound(to: ThreadMark.self).pointee.slot
        else { return }
        CrashMarkLayout.leave(slot)
    }

    /// Runs `body` inside a mark (`enter`, then `leave` however `body` ends, throwing included).
    @inlinable
    public func marking<Result, Failure: Error>(
        session: String,
        kind: CrashMark.Kind,
        detail: String,
        _ body: () throws(Failure) -> Result
    ) throws(Failure) -> Result {
        enter(session: session, kind: kind, detail: detail)
        defer { leave() }
        return try body()
    }

    /// Clears the marks the last process left (`leftBehind`) from the file, once the caller has dealt with them; their
    /// slots are free from then on. Until then, a process that dies leaves them to the next start as well.
    public func clearLeftBehind() {
        guard let base, !closed.load(ordering: .acquiring) else { return }
        for index in slots.unreserve() {
            CrashMarkLayout.clear(CrashMarkLayout.slot(index, of: base))
        }
    }

    /// Whether marks are kept (false for `disabled` and once closed).
    public var isEnabled: Bool { !closed.load(ordering: .relaxed) }

    /// How many threads found every slot taken, and so mark nothing.
    public var threadsUnmarked: Int { slots.refused }

    /// Stops marking and releases the file (its lock) for the next process; the marks set stay set. Call it at
    /// shutdown, once no thread is inside a mark: a clean shutdown leaves none set.
    public func close() {
        guard base != nil, !closed.exchange(true, ordering: .acquiringAndReleasing) else { return }
        CrashMarkFaults.unregister(key: key)
        pthread_key_delete(key)
        // Unlocked explicitly: the mapping, which stays, holds the open file and so would hold its lock.
        flock(descriptor, LOCK_UN)
        Glibc.close(descriptor)
    }

    /// The calling thread's slot, taken on its first mark; nil when none is free or marking stopped.
    @inline(__always)
    private func currentSlot() -> UnsafeMutableRawPointer? {
        guard base != nil else { return nil }
        if let record = pthread_getspecific(key) { return record.assumingMemoryBound(to: ThreadMark.self).pointee.slot }
        return takeSlot()
    }

    @inline(never)
    private func takeSlot() -> UnsafeMutableRawPointer? {
        guard let base, !closed.load(ordering: .acquiring) else { return nil }
        let index = slots.take()
        let slot = index.map { CrashMarkLayout.slot($0, of: base) }
        if let slot { CrashMarkLayout.clear(slot) }
        let record = ThreadMark.make(slot: slot, index: index ?? -1, slots: slots, signalStack: catchingFaults)
        pthread_setspecific(key, record)
        return slot
    }

    /// The marks set in the file open at `descriptor`, laid out by its own header (any slot count); the fatal signal
    /// its header records; and whether the file already has the layout for `slots` (so it is kept as it is).
    private static func read(
        _ descriptor: Int32,
        slots: Int
    ) -> (left: [(slot: Int, mark: CrashMark)], signal: Int32?, reusable: Bool) {
        var info = stat()
        guard fstat(descriptor, &info) == 0, info.st_size >= CrashMarkLayout.headerBytes,
            info.st_size <= CrashMarkLayout.fileBytes(slots: 65_536)
        else { return ([], nil, false) }
        let size = Int(info.st_size)
        let buffer = UnsafeMutableRawPointer.allocate(byteCount: size, alignment: 16)
        defer { buffer.deallocate() }
        guard pread(descriptor, buffer, size, 0) == size,
            UnsafeRawBufferPointer(start: buffer, count: CrashMarkLayout.magic.count).elementsEqual(
                CrashMarkLayout.magic
            ),
            buffer.load(fromByteOffset: CrashMarkLayout.slotSizeOffset, as: UInt32.self) == CrashMarkLayout.slotBytes
        else { return ([], nil, false) }
        let count = Int(buffer.load(fromByteOffset: CrashMarkLayout.slotCountOffset, as: UInt32.self))
        guard CrashMarkLayout.fileBytes(slots: count) <= size else { return ([], nil, false) }
        var left: [(slot: Int, mark: CrashMark)] = []
        for index in 0..<count {
            if let mark = CrashMarkLayout.mark(in: CrashMarkLayout.slot(index, of: buffer)) {
                left.append((index, mark))
            }
        }
        let signal = buffer.load(fromByteOffset: CrashMarkLayout.faultSignalOffset, as: UInt8.self)
        let reusable = count == slots && size == CrashMarkLayout.fileBytes(slots: slots)
        return (left, signal == 0 ? nil : Int32(signal), reusable)
    }

    /// Writes a mark read from a file of another layout into `slot` of the new one, as it was.
    private static func restore(_ mark: CrashMark, into slot: UnsafeMutableRawPointer) {
        CrashMarkLayout.enter(slot, session: mark.session, kind: mark.kind, detail: mark.detail, at: mark.enteredAt)
        slot.storeBytes(
            of: UInt8(truncatingIfNeeded: mark.signal ?? 0),
            toByteOffset: CrashMarkLayout.signalOffset,
            as: UInt8.self
        )
    }

    private static func reason(_ code: Int32) -> String { String(cString: strerror(code)) }
}
