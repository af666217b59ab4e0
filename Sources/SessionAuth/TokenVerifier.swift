import Crypto
import JWTKit
import Logging

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Checks tokens: a token seen before is answered from the `GrantCache` synchronously; a new one is verified by
/// jwt-kit (signature by the key its header's `kid` names, or without one by each key of its `alg`: `KeyRing`; then
/// `exp` and `nbf`), turned into a `Grant` and cached until its expiry.
///
/// Thread-safe: the cache has its own lock, jwt-kit's key collections are actors, built once on first use.
package final class TokenVerifier: Sendable {
    private let ring: Task<KeyRing?, Never>
    let cache: GrantCache

    package init(keys: VerificationKeys, cacheCapacity: Int) {
        cache = GrantCache(capacity: cacheCapacity)
        ring = Task {
            do {
                return try await keys.keyRing()
            } catch {
                // Every token is refused from now on: the log says why, once (the refusals point here).
                Logger(label: "feedbackhost.auth").error(
                    "the token keys could not be loaded; every token is refused",
                    metadata: ["error": "\(error)"]
                )
                return nil
            }
        }
    }

    /// The grant of a token verified before and not yet expired; nil when it must be verified.
    package func cachedGrant(_ token: String) -> Grant? {
        cache.grant(for: GrantCache.key(token), now: Date().timeIntervalSince1970)
    }

    /// Verifies a token and caches its grant; the rejection says what is wrong in words that never quote it.
    package func verify(_ token: String) async -> Result<Grant, TokenRejection> {
        guard let ring = await ring.value else {
            return .failure(.invalid("the server's token keys could not be loaded; see its log"))
        }
        let claims: TokenClaims
        do {
            claims = try await ring.verify(token)
        } catch let error as JWTError {
            return .failure(Self.rejection(error))
        } catch is KeyRing.UnknownKey {
            return .failure(
                .invalid(
                    "the token's header names a key (kid) this server does not hold: sign it with one of the keys in "
                        + "--auth-keys, or leave kid out"
                )
            )
        } catch {
            return .failure(.invalid("the token is not a JWT signed by a key this server accepts"))
        }
        let grant: Grant
        do {
            grant = try Grant(claims: claims)
        } catch {
            return .failure(error)
        }
        let now = Date().timeIntervalSince1970
        guard !grant.isExpired(at: now) else { return .failure(.expired("the token has expired; get a new one")) }
        cache.insert(grant, for: GrantCache.key(token), now: now)
        return .success(grant)
    }

    private static func rejection(_ error: JWTError) -> TokenRejection {
        switch error.errorType {
        case .claimVerificationFailure:
            if error.failedClaim is NotBeforeClaim {
                return .expired("the token is not valid yet (nbf); use it later or check the clocks")
            }
            return .expired("the token has expired; get a new one")
        case .malformedToken:
            return .invalid("the token is not a well-formed JWT (header.payload.signature in base64url)")
        default:
            return .invalid("the token's signature does not check out against any key this server accepts")
        }
    }
}
