import SessionJournal

/// A fork's paused effects (issue 32): the session's loop starts with its feedbacks stopped, as a runaway's are
/// stopped by the containment, and the same resume starts them; a paused session's pause is journaled with its
/// creation (`JournalRecord.paused`), so that it stays paused across passivations and restarts until resumed.
extension SystemSession {
    /// Starts the feedbacks that are paused (a fork's) or stopped (a runaway's) again: what they were, nil when they
    /// ran. The end of a pause is journaled before the feedbacks see the state, so anything they send follows it.
    @usableFromInline
    func resumeEffects() -> SessionGuard.Resumed? {
        containment?.resume { resumed in
            guard resumed == .pause else { return }
            recorder?.journal([.paused(sessionID: id.description, false)])
        }
    }
}
