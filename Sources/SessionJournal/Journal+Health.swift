import Dispatch
import Synchronization

/// Health: a failed commit makes the journal `failing` until a test write succeeds (`HealthProbing`). Runs on the
/// writer queue.
extension Journal: HealthProbing {
    /// Writes to the database's `meta` table.
    package func testWrite(then done: @escaping (Bool) -> Void) {
        dispatchPrecondition(condition: .onQueue(queue))
        guard let store else { return }
        done(store.probe().failure == nil)
    }

    /// Refuses whatever waits for the writer (the failure is still set), then clears the failure.
    package func endFailure() -> (@Sendable (JournalHealth) -> Void)? {
        while commitBatch() != nil {}
        return pending.withLock { state in
            state.failure = nil
            return state.healthHandler
        }
    }

    package static func unavailable(_ cause: JournalError) -> JournalError {
        JournalError(
            cause.code == .full ? .full : .unavailable,
            "not written: an earlier commit failed (\(cause.message)) and no test write has succeeded since"
        )
    }
}

/// Whether a journal can commit.
public enum JournalHealth: Sendable, Equatable {
    /// Commits work.
    case healthy
    /// A commit failed with this error and no test write has succeeded since: every append fails.
    case failing(JournalError)
}

extension Result {
    var failure: Failure? {
        if case .failure(let error) = self { return error }
        return nil
    }
}
