import Logging
public import ServiceLifecycle

extension ServiceApplication: Service {
    /// Serves until a graceful shutdown begins (a `ServiceGroup` triggers it on SIGTERM or SIGINT) or the task is
    /// cancelled, then runs ``shutdown(deadline:)`` with ``shutdownDeadline``. Call ``start()`` first: the port
    /// is known before the group runs, so it can be printed.
    public func run() async throws {
        // Throws only when the task is cancelled, which ends the service the same way.
        try? await gracefulShutdown()
        logger.info("shutting down", metadata: ["deadline": "\(shutdownDeadline)"])
        await shutdown(deadline: shutdownDeadline)
    }
}
