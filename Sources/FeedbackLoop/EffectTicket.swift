public import Synchronization

/// The identity of one running effect: its events count only while the ticket is live.
///
/// Concurrency: `isLive` is an atomic read by any thread (effects, the engine owner); `cancel()` is called by the
/// thread that owns the loop's engine or by `stop()`; the task handle sits behind a small mutex.
@usableFromInline
final class EffectTicket: Sendable {
    @usableFromInline
    let live = Atomic<Bool>(true)
    private let task = Mutex<Task<Void, Never>?>(nil)

    @usableFromInline
    init() {}

    /// True until the effect's request changes or disappears, or the loop stops.
    @inlinable
    var isLive: Bool { live.load(ordering: .acquiring) }

    /// Attaches the task that runs the effect; cancels it at once when the ticket is already dead.
    func attach(_ newTask: Task<Void, Never>) {
        let cancelled = task.withLock { slot -> Bool in
            slot = newTask
            return !live.load(ordering: .acquiring)
        }
        if cancelled { newTask.cancel() }
    }

    /// Marks every event of this effect, queued or future, as stale and cancels its task.
    @usableFromInline
    func cancel() {
        live.store(false, ordering: .releasing)
        let running = task.withLock { slot -> Task<Void, Never>? in
            defer { slot = nil }
            return slot
        }
        running?.cancel()
    }
}
