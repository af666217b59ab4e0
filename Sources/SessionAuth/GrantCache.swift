package import Crypto
import Synchronization

/// Verified tokens, keyed by the SHA-256 of the token (the token itself is not kept), each until its `exp`: a
/// check of a token seen before costs a hash and a dictionary lookup instead of a signature verification.
///
/// It keeps what a token says (its `Grant`), never whether it was let through: every request's grant, cached or not,
/// is checked by `Authorizer.check` against the live session's epoch and current token generation, so a revocation
/// (on this replica or another, read back with the session) ends a cached token at once.
///
/// Bounded: when `capacity` entries are held, expired ones are dropped, and if that frees nothing the cache starts
/// over (a flood of distinct valid tokens only costs their verification again). Thread-safe: one `Mutex`.
package final class GrantCache: Sendable {
    private let entries = Mutex<[SHA256.Digest: Grant]>([:])
    let capacity: Int

    package init(capacity: Int) {
        self.capacity = max(capacity, 1)
    }

    package static func key(_ token: String) -> SHA256.Digest {
        var token = token
        return token.withUTF8 { SHA256.hash(data: UnsafeRawBufferPointer($0)) }
    }

    /// The grant of a token verified before and not expired at `now` (seconds since 1970).
    package func grant(for key: SHA256.Digest, now: Double) -> Grant? {
        entries.withLock { entries in
            guard let grant = entries[key] else { return nil }
            if grant.isExpired(at: now) {
                entries[key] = nil
                return nil
            }
            return grant
        }
    }

    /// Keeps a verified token's grant until it expires.
    package func insert(_ grant: Grant, for key: SHA256.Digest, now: Double) {
        entries.withLock { entries in
            if entries.count >= capacity {
                entries = entries.filter { !$0.value.isExpired(at: now) }
                if entries.count >= capacity { entries.removeAll(keepingCapacity: true) }
            }
            entries[key] = grant
        }
    }

    /// Tokens held.
    package var count: Int { entries.withLock { $0.count } }
}
