import Dispatch

/// Health: a failed commit makes the journal `failing` until a test write (which reconnects) succeeds. Runs on the
/// journal's queue.
extension PostgresJournal {
    func becameUnhealthy(_ error: JournalError, handler: (@Sendable (JournalHealth) -> Void)?) {
        dispatchPrecondition(condition: .onQueue(queue))
        metrics.report(error)
        logger.error(
            "journal: cannot commit; writes are refused until a test write succeeds",
            metadata: ["cause": "\(JournalMetrics.cause(of: error))", "error": "\(error.message)"]
        )
        handler?(.failing(error))
        guard probeTimer == nil else { return }
        let every = max(configuration.probeIntervalMilliseconds, 1)
        let timer = DispatchSource.makeTimerSource(queue: queue)
        timer.schedule(deadline: .now() + .milliseconds(every), repeating: .milliseconds(every))
        timer.setEventHandler { [weak self] in self?.probe() }
        probeTimer = timer
        timer.resume()
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
