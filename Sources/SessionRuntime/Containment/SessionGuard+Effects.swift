import Dispatch
import SessionJournal

/// The session's effects run here after their first suspension (their start runs inside the step, already marked):
/// each job on a global queue, inside a crash mark of the session (`feedback`, an effect), so that a trap in an
/// effect's asynchronous part (decoding a page it fetched, say) quarantines the session at the next start instead of
/// repeating at every activation. Given to the loop only when marks are kept.
///
/// Thread-safe: every job is independent; the mark is the running thread's own.
extension SessionGuard: TaskExecutor {
    public func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let executor = asUnownedTaskExecutor()
        DispatchQueue.global().async { [self] in
            marks.enter(session: session, kind: .feedback, detail: Self.effectDetail)
            job.runSynchronously(on: executor)
            marks.leave()
        }
    }

    /// The executor for the session's effects: this guard when marks are kept, else none (nothing to note).
    package var effectExecutor: (any TaskExecutor)? { marks.isEnabled ? self : nil }

    /// What a mark of an effect's job says: the crash's reason reads "a feedback of it ran (…)".
    static let effectDetail = "an effect, after a suspension"
}
