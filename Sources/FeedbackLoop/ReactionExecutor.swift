import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The task executor of one `custom` feedback's stream task: it lets the engine owner run that task's reaction to a
/// new state on its own thread, so that what the task emits for the state is queued before the next reduce.
///
/// `deliver(_:)` arms the executor for the calling thread and runs `body` (which yields a state into the task's
/// stream). If that resumes the waiting task, the runtime enqueues the task's job here from the same thread: it runs
/// at once, inline, until the task suspends again (usually waiting for the next state). At most one job runs inline
/// per delivery; every other job (a later resumption from a timer, another thread, `Task.yield()`) goes to `fallback`
/// (the loop's effect executor), or to the global concurrent executor as usual.
///
/// Concurrency: `deliver(_:)` is called only by the loop's engine owner; `enqueue(_:)` may be called from any thread.
/// The armed thread's identity is atomic, and only the thread that armed it can take it.
@usableFromInline
final class ReactionExecutor: TaskExecutor {
    /// The thread that may run the next job inline, or 0.
    private let armedThread = Atomic<UInt>(0)
    private let fallback: (any TaskExecutor)?

    @usableFromInline
    init(fallback: (any TaskExecutor)? = nil) {
        self.fallback = fallback
    }

    /// Runs `body`, letting the job it enqueues on this executor from this thread run inline.
    func deliver(_ body: () -> Void) {
        let thread = Self.currentThread
        armedThread.store(thread, ordering: .releasing)
        body()
        // Not taken when the task was busy elsewhere (it finds the state in its buffer later).
        _ = armedThread.compareExchange(expected: thread, desired: 0, ordering: .relaxed)
    }

    @usableFromInline
    func enqueue(_ job: consuming ExecutorJob) {
        let thread = Self.currentThread
        if armedThread.compareExchange(expected: thread, desired: 0, ordering: .acquiringAndReleasing).exchanged {
            job.runSynchronously(on: asUnownedTaskExecutor())
        } else if let fallback {
            fallback.enqueue(job)
        } else {
            globalConcurrentExecutor.enqueue(job)
        }
    }

    private static var currentThread: UInt { UInt(bitPattern: Int(bitPattern: pthread_self())) }
}
