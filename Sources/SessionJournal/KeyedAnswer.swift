/// The answer a session gave to a request that carried an idempotency key, journaled in the same transaction as
/// the events it applied, so that a retry after a restart is answered again instead of applied twice.
public struct KeyedAnswer: Sendable, Equatable {
    /// The session's id.
    public var sessionID: String
    /// The client's idempotency key.
    public var key: String
    /// A keyed hash of the request's body (keyed with `Journal.fingerprintKey`, so it compares equal across
    /// restarts of the same journal and a client cannot predict it).
    public var fingerprint: UInt64
    /// The epoch of the answer's cursor.
    public var epoch: UInt64
    /// The revision the answer showed: that of the request's last event.
    public var revision: UInt64
    /// The state the answer showed, as JSON text.
    public var state: String

    /// Creates a keyed answer.
    public init(sessionID: String, key: String, fingerprint: UInt64, epoch: UInt64, revision: UInt64, state: String) {
        self.sessionID = sessionID
        self.key = key
        self.fingerprint = fingerprint
        self.epoch = epoch
        self.revision = revision
        self.state = state
    }
}
