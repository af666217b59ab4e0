import Synchronization

/// One session's token generation: the tokens the server mints for a session carry the generation they were minted
/// in, and revoking the session's tokens moves it on, so every token minted before stops checking out. A session never
/// revoked is at generation 0.
///
/// Each session in memory holds one (`HostedSession.tokenGeneration`), set from the journal when the session is
/// restored or taken over (`RecoveredSession.tokenGeneration`), so a token is always checked against the generation of
/// the copy that serves it, never against a table another replica cannot see. Without a journal it lives in memory
/// only and ends with its session.
///
/// Thread-safe: one `Mutex`, held while a revocation's journal record is appended, so that appends carry their
/// generations in order.
@usableFromInline
final class TokenGeneration: Sendable {
    private let value: Mutex<UInt64>

    init(_ generation: UInt64 = 0) {
        value = Mutex(generation)
    }

    /// The generation tokens must carry now.
    var current: UInt64 { value.withLock { $0 } }

    /// Moves the generation one on and calls `journal` with the new one under the lock, so that the records of two
    /// revocations are appended in the order of their generations. Returns the new generation.
    func advance(journal: (UInt64) -> Void) -> UInt64 {
        value.withLock { generation in
            generation &+= 1
            journal(generation)
            return generation
        }
    }
}
