/// The runtime's limits and timings: the part of the service's configuration that sessions, activation, the timer
/// waker and retention read. An immutable value.
package struct SessionLimits: Sendable {
    /// `Idempotency-Key`s each session remembers (the oldest are forgotten first); the journal keeps as many.
    package static let idempotencyKeysPerSession = 256
}
