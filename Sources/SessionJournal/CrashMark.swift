/// What one thread was running of a session's hosted code, as `CrashMarks` keeps it: when a process dies with the mark
/// set, the next start reads it back (`CrashMarks.leftBehind`) and knows which session to quarantine. A value.
public struct CrashMark: Sendable, Equatable {
    /// The hosted code a mark stands for.
    public enum Kind: UInt8, Sendable, Equatable, CustomStringConvertible {
        /// The system's reducer, applying one event.
        case reduce = 1
        /// The session's activation: its state read back and replayed, its feedbacks started.
        case activation = 2
        /// One of the session's feedbacks, run synchronously (its request or its immediate effect).
        case feedback = 3

        /// `reduce`, `activation` or `feedback`.
        public var description: String {
            switch self {
            case .reduce: "reduce"
            case .activation: "activation"
            case .feedback: "feedback"
            }
        }
    }

    /// The session's id (at most `CrashMarks.sessionBytes` bytes of it are kept).
    public var session: String
    /// What was running.
    public var kind: Kind
    /// An event type or other short text (at most `CrashMarks.detailBytes` bytes of it are kept).
    public var detail: String
    /// When the mark was entered, in milliseconds since 1970 (the coarse real-time clock: a few ms of resolution).
    public var enteredAt: Int64
    /// The fatal signal this thread took while inside the mark (SIGILL or SIGTRAP for a Swift trap, SIGSEGV, SIGBUS,
    /// SIGFPE, SIGABRT), nil when it took none: another thread's fault, a SIGKILL or an exit ended the process while
    /// this one was inside, so the session may only have been a bystander.
    public var signal: Int32?

    /// Creates a mark.
    public init(session: String, kind: Kind, detail: String, enteredAt: Int64, signal: Int32? = nil) {
        self.session = session
        self.kind = kind
        self.detail = detail
        self.enteredAt = enteredAt
        self.signal = signal
    }
}
