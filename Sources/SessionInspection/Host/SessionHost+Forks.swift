import FeedbackJSON
package import SessionRuntime

/// Forks (issue 32): a new session whose state is another's at a revision, recomputed and checked from the journal as
/// `states/{rev}` is, with its effects paused until a client resumes them, so that a fork never calls an upstream or
/// fires a timer by surprise. The pause is the containment's stop of a runaway's feedbacks (`Loop`'s
/// `feedbacksStopped`, `SessionGuard.resume`), taken from the loop's start and journaled (`JournalRecord.paused`), so
/// a paused fork stays paused across passivations and restarts.
///
/// Concurrency: runs on the calling thread; the journal's reads wait for their turn on its queue.
extension SessionHost {
    /// Starts a fork of session `id` at `revision` under a new id, its effects paused: the fork, which answers as a
    /// created session does. 410 for a revision no longer kept, 404 beyond the head (or for no such session), 500
    /// when the journal and the replay disagree.
    package func fork(of id: SessionID, at revision: UInt64) throws(APIError) -> any HostedSession {
        let journal = try inspectedJournal(id)
        let (state, system) = try state(journal, id, at: revision)
        return try startSession(
            id: SessionID.random(),
            system: system.name,
            state: state,
            chosenByClient: false,
            effectsPaused: true
        ).session
    }

    /// Starts the effects of session `id` again: a fork's paused ones (the end of the pause is journaled; the answer
    /// waits for it through `whenJournaled`) or a runaway's stopped feedbacks. 409 when they run.
    package func resumeEffects(of id: SessionID) throws(APIError) -> any HostedSession {
        let session = try session(id)
        guard session.resumeEffects() != nil else {
            throw APIError(
                .feedbacksRunning,
                "the effects of session \(id) are not paused (nor stopped as a runaway): nothing to resume"
            )
        }
        return session
    }
}
