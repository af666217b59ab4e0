import Synchronization

/// Answers given after their handler returned (a deferred handler's, an async handler's), gathered per shard so that
/// a burst of them, such as every answer a journal commit releases at once, costs one hop to the shard's queue
/// instead of one per answer.
///
/// Thread-safe: `add` from any thread, `take` on the shard's queue; the list and whether a hop is scheduled sit
/// under one `Mutex`.
final class LateAnswers: Sendable {
    /// One answer and the connection (by fd and id) it is for.
    struct Answer: Sendable {
        var fd: Int32
        var connectionID: UInt64
        var response: Response
    }

    private struct Pending {
        var answers: [Answer] = []
        var scheduled = false
    }

    private let pending = Mutex(Pending())

    /// Adds an answer; true when the caller must schedule the hop that takes it (none is scheduled yet). Taken, and
    /// moved into the list: a copy retained the response's body and fields for the caller's to release them.
    func add(_ answer: consuming Answer) -> Bool {
        var answer = Optional(answer)
        return pending.withLock { p in
            p.answers.append(answer.take()!)
            if p.scheduled { return false }
            p.scheduled = true
            return true
        }
    }

    /// Everything added so far, in order, in place of `spare` (an empty array the caller keeps between takes, so
    /// that the list is not grown afresh from one answer for each burst); the next `add` schedules a new hop.
    func take(into spare: inout [Answer]) {
        pending.withLock { p in
            p.scheduled = false
            swap(&p.answers, &spare)
        }
    }
}
