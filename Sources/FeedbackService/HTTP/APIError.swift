public import FeedbackJSON
public import HTTPServer

/// The one error type of the service's API: what went wrong, in words a person can act on, and the HTTP status
/// it maps to. Rendered as `application/problem+json` (RFC 9457) in one place, `problem`, by HTTPServer's `Problem`.
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
        case journalUnavailable = "journal-unavailable"
        case storageFull = "storage-full"
        case sessionsMemoryFull = "sessions-memory-full"
        case stateTooLarge = "state-too-large"
        case sessionPassivated = "session-passivated"
        case tokenRequired = "token-required"
        case tokenInvalid = "token-invalid"
        case insufficientScope = "insufficient-scope"
        case clockStepsExceeded = "clock-steps-exceeded"

        /// The HTTP status for this code.
        public var status: Int {
            switch self {
            case .malformedJSON, .invalidRequest: 400
            case .tokenRequired, .tokenInvalid: 401
            case .corsRefused, .insufficientScope: 403
            case .sessionNotFound, .systemNotFound: 404
            case .methodNotAllowed: 405
            case .idempotencyInFlight, .sessionExists: 409
            case .preconditionFailed: 412
            case .bodyTooLarge: 413
            case .unsupportedMediaType: 415
            case .invalidEvent, .eventNotAccepted, .idempotencyMismatch, .stateTooLarge, .clockStepsExceeded: 422
            case .inboxFull: 429
            case .atCapacity, .draining, .sessionPassivated: 503
            case .sessionBroken: 500
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
            case .journalUnavailable: "Journal unavailable"
            case .storageFull: "Insufficient storage"
            case .sessionsMemoryFull: "Session memory budget full"
            case .stateTooLarge: "State too large"
            case .sessionPassivated: "Session passivated during the request"
            case .tokenRequired: "Token required"
            case .tokenInvalid: "Token not accepted"
            case .insufficientScope: "Token does not allow this"
            case .clockStepsExceeded: "Too many deadlines in one advance"
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

    /// The RFC 9457 problem: `type` (a URN naming the code, listed in docs/API.md), `title`, `status`, `detail`, and
    /// any extra members.
    public var problem: Problem {
        Problem(
            type: "urn:feedbackhost:problem:\(code.rawValue)",
            title: code.title,
            status: code.status,
            detail: message,
            extensions: extra.mapValues { $0.serialized() }
        )
    }
}
