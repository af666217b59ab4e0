import Synchronization

/// Each session's token generation: server-minted tokens carry the generation they were minted in, and revoking a
/// session's tokens moves it on, so every token minted before no longer checks out. A session never revoked is at
/// generation 0 and has no entry.
///
/// Revoking also sends `reauth` to the session's open streams (`StreamRegistry.reauth`). Kept in memory only, not
/// journaled: a restart forgets revocations (tokens of a session whose tokens were revoked check out
/// again until they expire, or until the server key is rotated). Thread-safe: one `Mutex`.
final class TokenRevocations: Sendable {
    private let generations = Mutex<[SessionID: UInt64]>([:])

    /// The generation tokens of `id` must carry.
    func generation(of id: SessionID) -> UInt64 {
        generations.withLock { $0[id] ?? 0 }
    }

    /// Revokes every token of `id`; returns the new generation.
    func revoke(_ id: SessionID) -> UInt64 {
        generations.withLock { generations in
            let next = (generations[id] ?? 0) + 1
            generations[id] = next
            return next
        }
    }

    /// Forgets a deleted session's generation (its tokens die with its epoch anyway).
    func forget(_ id: SessionID) {
        _ = generations.withLock { $0.removeValue(forKey: id) }
    }
}
