/// The fingerprint of an idempotent request's body: a keyed 64-bit hash, never 0.
///
/// With a secret key a client cannot make two bodies collide on purpose, and with the key the journal keeps
/// (`SessionJournaling.fingerprintKey`) a fingerprint computed before a restart equals the one computed after it. The
/// API layer gives the host its implementation (`SessionAuth`'s HMAC-SHA256 of swift-crypto, the one place the
/// service uses a cryptographic library), so the runtime stays free of it.
///
/// 0 is no fingerprint's value: a journal marks with it the answers whose fingerprints an earlier build computed
/// with another hash, which then match any body (`IdempotencyLedger`).
///
/// Implementations are immutable values: thread-safe.
package protocol BodyFingerprinting: Sendable {
    /// The fingerprint of `body`, never 0.
    func fingerprint(_ body: [UInt8]) -> UInt64
}
