/// Why a `LocalInstance` could not start, answer or stop; its message says what to do and, when the instance ran,
/// ends with the tail of the instance's log.
public struct LocalInstanceError: Error, CustomStringConvertible, Sendable {
    /// What went wrong.
    public enum Code: Sendable, Equatable {
        /// No `feedback-host` binary was found (`FEEDBACKHOST_BINARY`, `PATH`, the package's own build).
        case binaryNotFound
        /// The process started and exited, or never said where it listens, within the start's time limit.
        case startFailed
        /// A request to the instance failed or was answered with an error status.
        case requestFailed
    }

    /// What went wrong.
    public let code: Code
    /// A sentence a person can act on, followed by the instance's log tail when there is one.
    public let message: String

    /// An error of `code` saying `message`.
    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { message }
}
