package import Dispatch
package import Logging

/// A journal whose failed commit makes it `failing` until a test write succeeds: the health cycle both journals share
/// (unhealthy, a test write every `probeIntervalMilliseconds`, healthy again), each with its own test write and its own
/// way of refusing what was appended during the failure.
///
/// Concurrency: everything here runs on the journal's `queue`, which owns `probeTimer` and which the timer fires on.
package protocol HealthProbing: AnyObject {
    /// The journal's serial queue.
    var queue: DispatchQueue { get }
    var metrics: JournalMetrics { get }
    var logger: Logger { get }
    var configuration: JournalConfiguration { get }
    /// The test writes' timer while the journal is failing, nil while it is healthy (or closed). Owned by `queue`.
    var probeTimer: (any DispatchSourceTimer)? { get set }

    /// One test write, on the queue: calls `done` on the queue with whether it succeeded, or not at all when none can
    /// be tried now (the next tick tries again).
    func testWrite(then done: @escaping (Bool) -> Void)

    /// After a test write succeeded: refuses whatever was appended during the failure (it may follow a lost append of
    /// the same writer), clears the failure and returns the health handler.
    func endFailure() -> (@Sendable (JournalHealth) -> Void)?
}

extension HealthProbing {
    /// After a failed commit (recorded as the journal's failure by the caller): reports it (gauges, an error line,
    /// `handler`) and starts the test writes, one timer at a time.
    package func becameUnhealthy(_ error: JournalError, handler: (@Sendable (JournalHealth) -> Void)?) {
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

    /// A tick of the timer: a test write, and when it succeeds (and the journal was not closed meanwhile) the end of
    /// the failure.
    private func probe() {
        dispatchPrecondition(condition: .onQueue(queue))
        testWrite { [self] succeeded in
            guard succeeded, let timer = probeTimer else { return }
            timer.cancel()
            probeTimer = nil
            let handler = endFailure()
            metrics.report(nil)
            logger.info("journal: commits work again")
            handler?(.healthy)
        }
    }
}
