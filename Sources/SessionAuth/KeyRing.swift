import JWTKit

/// jwt-kit's key collections for the keys tokens are checked with (`VerificationKeys.keyRing()`), built once: one
/// holding every key, which checks a token by the key its header's `kid` names, and one per key (per key of a JWKS)
/// tagged with the algorithm it checks, in the order the keys were given, for a token whose header names none.
///
/// jwt-kit alone checks a token without a `kid` by the first key added, whatever its algorithm: with an HS256 secret
/// listed before an ES256 key, every ES256 token without a `kid` was refused.
///
/// Immutable; the collections are actors: thread-safe.
struct KeyRing: Sendable {
    /// A collection of one key and the `alg` of the tokens it checks.
    struct Single: Sendable {
        let algorithm: String
        let collection: JWTKeyCollection
    }

    /// A token whose header names a key this server does not hold. jwt-kit alone checks it with its first key, so
    /// that a token naming a retired or foreign key still passed when that key happened to sign it.
    struct UnknownKey: Error {}

    /// Every key, by `kid`.
    let named: JWTKeyCollection
    /// The `kid` of every key in `named`.
    let kids: Set<String>
    /// Each key alone, in the order given.
    let singles: [Single]

    /// The claims of `token` once its signature, `exp` and `nbf` check out. A token whose header has a `kid` is
    /// checked by that key, and refused with `UnknownKey` when no key has it; one without by each key of the header's
    /// `alg` in turn, the first that checks out winning. Throws what jwt-kit throws: `malformedToken` for a header
    /// that is not base64url JSON, the claim that failed (`exp`, `nbf`) of a token whose signature checked out, else
    /// the first key's error (`signatureVerificationFailed` when no key has the header's `alg`).
    func verify(_ token: String) async throws -> TokenClaims {
        guard let header = TokenHeader(token: token) else {
            throw JWTError.malformedToken(reason: "the header is not base64url JSON with a string alg and kid")
        }
        if let kid = header.kid {
            guard kids.contains(kid) else { throw UnknownKey() }
            return try await named.verify(token, as: TokenClaims.self)
        }
        var first: (any Error)?
        for single in singles where single.algorithm == header.alg {
            do {
                return try await single.collection.verify(token, as: TokenClaims.self)
            } catch let error as JWTError where error.errorType != .signatureVerificationFailed {
                // The token's verdict, not this key's (its exp or nbf once this key's signature checked out, or its
                // form): no other key would do better.
                throw error
            } catch {
                // A signature of another key (or one of the wrong length for this one, which swift-crypto throws).
                if first == nil { first = error }
            }
        }
        throw first ?? JWTError.signatureVerificationFailed
    }
}
