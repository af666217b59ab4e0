import Dispatch
import Logging

/// What both journals do when a commit fails: report it (gauges, an error line, the health handler) and start the
/// test writes on their queue, one timer at a time.
///
/// Concurrency: called on the journal's queue, which the returned timer fires on.
enum FailingJournal {
    /// Reports `error` and returns the probe timer to keep: `existing` when there is one, else a new one that runs
    /// `probe` every `probeIntervalMilliseconds` on `queue`.
    static func report(
        _ error: JournalError,
        metrics: JournalMetrics,
        logger: Logger,
        handler: (@Sendable (JournalHealth) -> Void)?,
        existing: (any DispatchSourceTimer)?,
        every milliseconds: Int,
        queue: DispatchQueue,
        probe: @escaping () -> Void
    ) -> any DispatchSourceTimer {
        dispatchPrecondition(condition: .onQueue(queue))
        metrics.report(error)
        logger.error(
            "journal: cannot commit; writes are refused until a test write succeeds",
            metadata: ["cause": "\(JournalMetrics.cause(of: error))", "error": "\(error.message)"]
        )
        handler?(.failing(error))
        if let existing { return existing }
        let every = max(milliseconds, 1)
        let timer = DispatchSource.makeTimerSource(queue: queue)
        timer.schedule(deadline: .now() + .milliseconds(every), repeating: .milliseconds(every))
        timer.setEventHandler(handler: probe)
        timer.resume()
        return timer
    }
}
