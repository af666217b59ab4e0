import Dispatch
import Foundation
package import Logging
import SessionJournal
package import SessionRuntime
import Synchronization

/// `verify.on.start`: the journal is replayed through this build before the server takes traffic.
extension SessionHost {
    /// Holds `/readyz` at 503 while every journaled session is replayed through `systems` (on a thread of its own;
    /// the journal's writes wait meanwhile), then lifts it when at most `maxDivergent` sessions diverged or failed,
    /// or keeps it with the report's words: a replica running a wrong build takes no traffic. Without a journal,
    /// nothing.
    package func verifyBeforeReady(systems: [HostedSystem], maxDivergent: Int, logger: Logger) {
        guard let journal = persistence?.journal else { return }
        readinessHold.withLock {
            $0 = APIError(
                .verifying,
                "the server is replaying its journal through this build (verify.on.start)",
                retryAfter: 1
            )
        }
        Thread.detachNewThread { [self] in
            let verifier = JournalVerifier(systems: systems)
            let result: Result<VerificationReport, JournalError> = Result { () throws(JournalError) in
                try verifier.verify(journal, keep: 5) { report in
                    readinessHold.withLock {
                        $0 = APIError(
                            .verifying,
                            "the server is replaying its journal through this build (verify.on.start): "
                                + "\(report.total.sessions) of \(report.sessionsInJournal) sessions so far",
                            retryAfter: 1
                        )
                    }
                }
            }
            switch result {
            case .success(let report) where report.divergent <= maxDivergent:
                readinessHold.withLock { $0 = nil }
                logger.info(
                    "journal verified: this build reproduces it",
                    metadata: ["report": "\(report.lines.joined(separator: "; "))"]
                )
            case .success(let report):
                let message =
                    "this build does not reproduce \(report.divergent) journaled sessions (verify.max.divergent is "
                    + "\(maxDivergent)): \(report.lines.joined(separator: "; ")). Roll back, or run "
                    + "`feedback-host verify` for the whole report"
                readinessHold.withLock { $0 = APIError(.verificationFailed, message) }
                logger.error("journal verification failed", metadata: ["report": "\(message)"])
            case .failure(let error):
                readinessHold.withLock {
                    $0 = APIError(.verificationFailed, "the journal could not be read for verification: \(error)")
                }
                logger.error("journal verification failed", metadata: ["error": "\(error)"])
            }
        }
    }
}
