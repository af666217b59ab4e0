import Dispatch

/// Health: a failed commit makes the journal `failing` until a test write succeeds. Runs on the writer queue.
extension Journal {
    /// After a failed commit: says so, and starts the test writes.
    func becameUnhealthy(_ error: JournalError, handler: (@Sendable (JournalHealth) -> Void)?) {
        probeTimer = FailingJournal.report(
            error,
            metrics: metrics,
            logger: logger,
            handler: handler,
            existing: probeTimer,
            every: configuration.probeIntervalMilliseconds,
            queue: queue
        ) { [weak self] in self?.probeOnQueue() }
    }

    /// A test write while failing; when it succeeds, whatever was appended during the failure is refused (it may
    /// follow a lost append of the same writer), then the journal is healthy again.
    private func probeOnQueue() {
        dispatchPrecondition(condition: .onQueue(queue))
        guard let store, case .success = store.probe() else { return }
        probeTimer?.cancel()
        probeTimer = nil
        while commitBatch() != nil {}
        let handler = pending.withLock { state in
            state.failure = nil
            return state.healthHandler
        }
        metrics.report(nil)
        logger.info("journal: commits work again")
        handler?(.healthy)
    }

    static func unavailable(_ cause: JournalError) -> JournalError {
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
