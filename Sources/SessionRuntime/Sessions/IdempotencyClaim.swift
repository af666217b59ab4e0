/// A request's claim on an `Idempotency-Key`: the key and the fingerprint of its body, handed to the session so
/// that it journals the answer with the request's events.
public struct IdempotencyClaim: Sendable, Equatable {
    /// The client's key.
    public var key: String
    /// The keyed hash of the request's body.
    public var fingerprint: UInt64

    /// Creates a claim.
    public init(key: String, fingerprint: UInt64) {
        self.key = key
        self.fingerprint = fingerprint
    }
}
