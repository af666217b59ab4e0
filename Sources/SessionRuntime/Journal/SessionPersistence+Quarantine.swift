import FeedbackJSON
import Foundation
import Logging
package import SessionJournal

/// Quarantined sessions (issue 31): a session whose code was running when the process died is kept out of memory
/// until an admin releases or deletes it. The record is the journal's, so with PostgreSQL every replica reads it.
extension SessionPersistence {
    /// Quarantines what the last process left marked when it died inside hosted code: each mark with the fatal
    /// signal (the culprit) quarantines its session; marks without one (threads that were only inside another
    /// session when another thread faulted) are logged and left alone. Called at start, before any activation;
    /// the marks are cleared once every quarantine is durable, so a death in between leaves them for the next start.
    package func quarantineLeftBehind(_ marks: CrashMarks) {
        guard !marks.leftBehind.isEmpty else { return }
        var done = true
        for mark in marks.leftBehind {
            guard let signal = mark.signal else {
                logger.warning(
                    Logger.Message(
                        stringLiteral: "the last process ended while a thread ran this session's code, on another "
                            + "thread's fault: not quarantined"
                    ),
                    metadata: ["session.id": "\(mark.session)", "kind": "\(mark.kind)", "detail": "\(mark.detail)"]
                )
                continue
            }
            let reason = Self.quarantineReason(mark, signal: signal)
            do {
                try journal.quarantine(mark.session, reason: reason, at: mark.enteredAt)
                logger.error("session quarantined", metadata: ["session.id": "\(mark.session)", "reason": "\(reason)"])
            } catch {
                done = false
                logger.error(
                    "a session to quarantine could not be written to the journal; kept for the next start",
                    metadata: ["session.id": "\(mark.session)", "error": "\(error.message)"]
                )
            }
        }
        if done { marks.clearLeftBehind() }
    }

    /// The sentence a quarantine keeps: what ran, where and when, and the signal.
    static func quarantineReason(_ mark: CrashMark, signal: Int32) -> String {
        let what: String
        switch mark.kind {
        case .reduce:
            what = "its reducer or a feedback applied the event that makes revision \(mark.detail.dropFirst())"
        case .activation: what = "it was being activated (\(mark.detail)), its feedbacks seeing its state"
        case .feedback: what = "a feedback of it ran (\(mark.detail))"
        }
        let when = Date(timeIntervalSince1970: Double(mark.enteredAt) / 1000).formatted(.iso8601)
        return "the server process died (\(Self.signalName(signal))) while \(what), at \(when)"
    }

    static func signalName(_ signal: Int32) -> String {
        switch signal {
        case SIGILL: "SIGILL, a Swift trap"
        case SIGTRAP: "SIGTRAP, a Swift trap"
        case SIGSEGV: "SIGSEGV"
        case SIGBUS: "SIGBUS"
        case SIGFPE: "SIGFPE"
        case SIGABRT: "SIGABRT"
        default: "signal \(signal)"
        }
    }

    /// The problem a request for a quarantined session gets, read from the journal (another replica may have
    /// quarantined it); nil when it is not quarantined or the journal cannot say.
    package func quarantineProblem(_ id: SessionID) -> APIError? {
        guard let quarantine = try? journal.quarantine(of: id.description) else { return nil }
        return Self.quarantined(id, quarantine)
    }

    static func quarantined(_ id: SessionID, _ quarantine: Quarantine) -> APIError {
        APIError(
            .sessionQuarantined,
            "session \(id) is quarantined: \(quarantine.reason). It is not brought into memory and its feedbacks and "
                + "timers do not run, so that it cannot take the server down again. Once a fixed build runs, an admin "
                + "releases it with POST /v1/sessions/\(id)/release; or deletes it with DELETE",
            extra: ["quarantinedAt": .int(quarantine.at / 1000)]
        )
    }

    /// Ends a quarantine; false when the session was not quarantined.
    package func releaseQuarantine(_ id: SessionID) throws(APIError) -> Bool {
        do {
            return try journal.releaseQuarantine(id.description)
        } catch {
            throw Self.notRead(error)
        }
    }
}
