/// What a `FeedbackHost` request ended with when it did not succeed: the HTTP status (0: no answer) and the
/// problem's `detail` (or what went wrong on the way).
public struct HostClientError: Error, CustomStringConvertible, Sendable, Equatable {
    /// The answer's status; 0 when there was none (no connection, a timeout).
    public let status: Int
    /// The problem's `type` code (`invalid-event`, ...) when the server sent one.
    public let code: String?
    /// What the server or the connection said.
    public let message: String

    /// An error of `status` saying `message`.
    public init(status: Int, code: String? = nil, message: String) {
        self.status = status
        self.code = code
        self.message = message
    }

    public var description: String { status == 0 ? message : "\(status) \(code ?? ""): \(message)" }
}
