import Dispatch

/// Health: a failed commit makes the journal `failing` until a test write (which reconnects) succeeds. Runs on the
/// journal's queue.
extension PostgresJournal {
    func becameUnhealthy(_ error: JournalError, handler: (@Sendable (JournalHealth) -> Void)?) {
        probeTimer = FailingJournal.report(
            error,
            metrics: metrics,
            logger: logger,
            handler: handler,
            existing: probeTimer,
            every: configuration.probeIntervalMilliseconds,
            queue: queue
        ) { [weak self] in self?.probe() }
    }

    /// A test write while failing (opening the connection again when it broke); when it succeeds, the appends that
    /// waited during the failure are refused (they may follow a lost append of the same writer), then the journal is
    /// healthy again.
    private func probe() {
        dispatchPrecondition(condition: .onQueue(queue))
        guard !running else { return }
        probes += 1
        run([.init(name: "probe", parameters: [String(probes)])]) { [self] result in
            guard case .success(let outcomes) = result, outcomes.allSatisfy({ $0.error == nil }), probeTimer != nil
            else { return }
            probeTimer?.cancel()
            probeTimer = nil
            let (refused, error, handler) = state.withLock { state in
                var refused: [Append] = []
                state.jobs.removeAll { job in
                    guard case .appends(let appends) = job else { return false }
                    refused += appends
                    return true
                }
                let error = state.failure.map(Journal.unavailable)
                state.failure = nil
                return (refused, error, state.healthHandler)
            }
            if let error {
                for append in refused { append.completion(.failure(error)) }
            }
            metrics.report(nil)
            logger.info("journal: commits work again")
            handler?(.healthy)
        }
    }
}
