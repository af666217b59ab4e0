import Dispatch

/// Where the steps of sessions with slow reducers run once they are offloaded: a concurrent Dispatch queue of its
/// own, so that a reduce that takes seconds holds neither a server thread (a shard) nor one of Swift's cooperative
/// threads, which every effect and stream shares. A `TaskExecutor`: a loop's continuation task runs its jobs here.
///
/// Thread-safe: Dispatch owns the queue.
package final class SlowLane: TaskExecutor {
    private let queue = DispatchQueue(label: "feedbackhost.slow-lane", attributes: .concurrent)

    package init() {}

    /// Runs `body` on the lane.
    package func run(_ body: @escaping @Sendable () -> Void) {
        queue.async(execute: body)
    }

    package func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let executor = asUnownedTaskExecutor()
        queue.async { job.runSynchronously(on: executor) }
    }
}
