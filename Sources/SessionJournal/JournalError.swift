/// The one error type of the Journal module: a code and a message a person can act on.
///
/// Values are immutable and `Sendable`; they are created on the journal's writer queue or by `open`.
public struct JournalError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What went wrong, in a form code can switch over.
    public enum Code: Sendable, Equatable {
        /// The data directory cannot be created or is not a directory.
        case directory
        /// SQLite refused an open, a statement or a commit (an I/O error, a damaged file).
        case sqlite
        /// The disk holding the journal is full (SQLite's `SQLITE_FULL`, the system's `ENOSPC`).
        case full
        /// Another process holds the data directory (see `DataDirectoryLock`).
        case locked
        /// The journal cannot commit since an earlier commit failed; it accepts writes again once a test write
        /// succeeds (see `Journal.health`).
        case unavailable
        /// The journal was closed before the operation could run.
        case closed
        /// A configuration value cannot be used (an unknown fsync policy).
        case configuration
        /// PostgreSQL refused a statement or a commit, or the connection to it failed.
        case postgres
        /// Another replica owns the session now (it read the session back since this one did): the append was
        /// refused and nothing of it written. Drop the session; its next request activates it wherever it lands.
        case fenced
    }

    /// What went wrong.
    public var code: Code
    /// A message for the person reading the log.
    public var message: String

    /// Creates an error with a code and a message.
    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    /// `code: message`.
    public var description: String { "\(code): \(message)" }
}
