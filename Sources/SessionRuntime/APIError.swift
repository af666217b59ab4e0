public import FeedbackJSON

/// The one error type of the service's API: what went wrong, in words a person can act on, and the HTTP status
/// it maps to. Rendered as `application/problem+json` (RFC 9457) in one place, the API's `APIError.problem`, by
/// HTTPServer's `Problem`; the runtime that raises it knows no HTTP.
public struct APIError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The kind of failure; each maps to one status.
    public enum Code: String, Sendable, Equatable {
        case malformedJSON = "malformed-json"
        case invalidRequest = "invalid-request"
        case sessionNotFound = "session-not-found"
        case systemNotFound = "system-not-found"
        case methodNotAllowed = "method-not-allowed"
        case bodyTooLarge = "body-too-large"
        case unsupportedMediaType = "unsupported-media-type"
        case invalidEvent = "invalid-event"
        case eventNotAccepted = "event-not-accepted"
        case idempotencyMismatch = "idempotency-key-reused"
        case idempotencyInFlight = "idempotency-key-in-flight"
        case preconditionFailed = "precondition-failed"
        case corsRefused = "cors-refused"
        case sessionExists = "session-exists"
        case inboxFull = "inbox-full"
        case atCapacity = "at-capacity"
        case draining = "draining"
        case sessionBroken = "session-broken"
        case sessionSchemaNewer = "session-schema-newer"
        case sessionSchemaUnreadable = "session-schema-unreadable"
        case verifying = "verifying"
        case exportUnavailable = "export-unavailable"
        case verificationFailed = "verification-failed"
        case journalUnavailable = "journal-unavailable"
        case storageFull = "storage-full"
        case sessionsMemoryFull = "sessions-memory-full"
        case stateTooLarge = "state-too-large"
        case sessionPassivated = "session-passivated"
        case tokenRequired = "token-required"
        case tokenInvalid = "token-invalid"
        case insufficientScope = "insufficient-scope"
        case clockStepsExceeded = "clock-steps-exceeded"
        case sessionQuarantined = "session-quarantined"
        case feedbacksRunning = "feedbacks-running"
        case notQuarantined = "not-quarantined"
        case inspectorOff = "inspector-off"
        case revisionNotFound = "revision-not-found"
        case revisionGone = "revision-not-kept"
        case historyMismatch = "history-mismatch"
        case sequenceGap = "sequence-gap"
        case sequenceSuperseded = "sequence-superseded"
        case sequenceInFlight = "sequence-in-flight"
        case clientUnknown = "client-unknown"

        /// The HTTP status for this code.
        public var status: Int {
            switch self {
            case .malformedJSON, .invalidRequest: 400
            case .tokenRequired, .tokenInvalid: 401
            case .corsRefused, .insufficientScope: 403
            case .sessionNotFound, .systemNotFound, .inspectorOff, .revisionNotFound: 404
            case .revisionGone: 410
            case .historyMismatch: 500
            case .methodNotAllowed: 405
            case .idempotencyInFlight, .sessionExists, .exportUnavailable: 409
            case .sessionQuarantined, .feedbacksRunning, .notQuarantined: 409
            case .sequenceGap, .sequenceSuperseded, .sequenceInFlight, .clientUnknown: 409
            case .preconditionFailed: 412
            case .bodyTooLarge: 413
            case .unsupportedMediaType: 415
            case .invalidEvent, .eventNotAccepted, .idempotencyMismatch, .stateTooLarge, .clockStepsExceeded: 422
            case .inboxFull: 429
            case .atCapacity, .draining, .sessionPassivated: 503
            case .sessionBroken, .sessionSchemaUnreadable: 500
            case .sessionSchemaNewer, .verifying, .verificationFailed: 503
            case .journalUnavailable: 503
            case .storageFull, .sessionsMemoryFull: 507
            }
        }

        /// A short, stable summary, the problem's `title`.
        public var title: String {
            switch self {
            case .malformedJSON: "Malformed JSON"
            case .invalidRequest: "Invalid request"
            case .sessionNotFound: "Session not found"
            case .systemNotFound: "System not found"
            case .methodNotAllowed: "Method not allowed"
            case .bodyTooLarge: "Body too large"
            case .unsupportedMediaType: "Unsupported media type"
            case .invalidEvent: "Not an event of this system"
            case .eventNotAccepted: "Event not accepted from clients"
            case .idempotencyMismatch: "Idempotency key reused with another body"
            case .idempotencyInFlight: "Request with this idempotency key still in progress"
            case .preconditionFailed: "Precondition failed"
            case .corsRefused: "Cross-origin request refused"
            case .sessionExists: "Session already exists"
            case .inboxFull: "Session busy"
            case .atCapacity: "Server at capacity"
            case .draining: "Server shutting down"
            case .sessionBroken: "Session could not be restored"
            case .sessionSchemaNewer: "Session written by a newer build"
            case .sessionSchemaUnreadable: "Session not readable by this build's migrations"
            case .verifying: "Verifying the journal"
            case .exportUnavailable: "No journal to export from"
            case .verificationFailed: "This build does not reproduce the journal"
            case .journalUnavailable: "Journal unavailable"
            case .storageFull: "Insufficient storage"
            case .sessionsMemoryFull: "Session memory budget full"
            case .stateTooLarge: "State too large"
            case .sessionPassivated: "Session passivated during the request"
            case .tokenRequired: "Token required"
            case .tokenInvalid: "Token not accepted"
            case .insufficientScope: "Token does not allow this"
            case .clockStepsExceeded: "Too many deadlines in one advance"
            case .sessionQuarantined: "Session quarantined"
            case .feedbacksRunning: "Feedbacks already running"
            case .notQuarantined: "Session not quarantined"
            case .inspectorOff: "Inspection routes off"
            case .revisionNotFound: "No such revision yet"
            case .revisionGone: "Revision no longer kept"
            case .historyMismatch: "The journal and the replay disagree"
            case .sequenceGap: "Client sequence has a gap"
            case .sequenceSuperseded: "Client sequence already answered"
            case .sequenceInFlight: "Client post still in progress"
            case .clientUnknown: "Client not known to the session"
            }
        }
    }

    /// The kind of failure.
    public let code: Code
    /// What happened and what to do about it, the problem's `detail`.
    public let message: String
    /// Seconds after which a retry may succeed, sent as `Retry-After` (429, 503 and 507).
    public let retryAfter: Int?
    /// Extra members of the problem object (`"accepted": [...]`, `"allow": [...]`).
    public let extra: [String: JSONValue]

    /// Creates an error.
    public init(_ code: Code, _ message: String, retryAfter: Int? = nil, extra: [String: JSONValue] = [:]) {
        self.code = code
        self.message = message
        self.retryAfter = retryAfter
        self.extra = extra
    }

    /// The HTTP status.
    public var status: Int { code.status }

    public var description: String { "\(code.status) \(code.title): \(message)" }

    /// The `WWW-Authenticate` challenge of a 401 or of a 403 for a weaker scope (RFC 6750 §3); nil for the others.
    public var challenge: String? {
        switch code {
        case .tokenRequired: #"Bearer realm="feedbackhost""#
        case .tokenInvalid: #"Bearer realm="feedbackhost", error="invalid_token""#
        case .insufficientScope:
            if case .string(let scope)? = extra["scope"] {
                #"Bearer realm="feedbackhost", error="insufficient_scope", scope="\#(scope)""#
            } else {
                #"Bearer realm="feedbackhost", error="insufficient_scope""#
            }
        default: nil
        }
    }
}

extension APIError {
    /// A journaled session this build cannot read: written at a newer schema version (503: a replica of the newer
    /// build serves it; this one will once it runs that build), or at an older one that no migration reaches or whose
    /// migration or decoding failed (500: a bug of the system's migrations, fixed by a build that reads it). The
    /// detail and the extra members name the session, the versions and the JSON Pointer where it failed.
    static func unreadable(
        session: SessionID,
        _ what: String,
        version: Int,
        current: Int,
        path: String? = nil,
        newer: Bool = false
    ) -> APIError {
        var extra: [String: JSONValue] = [
            "session": .string(session.description),
            "schemaVersion": .int(Int64(version)),
            "buildSchemaVersion": .int(Int64(current)),
        ]
        if let path { extra["path"] = .string(path) }
        let at = path.map { $0.isEmpty ? " (at the root)" : " (at \($0))" } ?? ""
        if newer {
            return APIError(
                .sessionSchemaNewer,
                "session \(session) was written by a newer build (schema version \(version); this build reads up to "
                    + "\(current)): \(what). Send it to a replica of the newer build; this one serves it once "
                    + "upgraded. "
                    + "Its records are kept",
                retryAfter: 5,
                extra: extra
            )
        }
        return APIError(
            .sessionSchemaUnreadable,
            "session \(session) cannot be read by this build: \(what)\(at). Its records are kept: a build whose "
                + "migrations read schema version \(version) serves it; DELETE it to discard them",
            extra: extra
        )
    }
}
