import Dispatch
package import SessionJournal
import Synchronization

/// Health: a failed commit makes the journal `failing` until a test write (which reconnects) succeeds
/// (`HealthProbing`). Runs on the journal's queue.
extension PostgresJournal: HealthProbing {
    /// Writes to `fh_meta`, opening the connection again when it broke; not while the connection is busy.
    package func testWrite(then done: @escaping (Bool) -> Void) {
        dispatchPrecondition(condition: .onQueue(queue))
        guard !running else { return }
        probes += 1
        run([.init(name: "probe", parameters: [String(probes)])]) { result in
            guard case .success(let outcomes) = result else { return done(false) }
            done(outcomes.allSatisfy { $0.error == nil })
        }
    }

    /// Refuses the appends that waited during the failure and clears it, under the lock.
    package func endFailure() -> (@Sendable (JournalHealth) -> Void)? {
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
        return handler
    }
}
