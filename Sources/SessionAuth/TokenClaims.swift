package import JWTKit

#if canImport(FoundationEssentials)
package import FoundationEssentials
#else
package import Foundation
#endif

/// The claims FeedbackHost reads from a JWT, whoever signed it (docs/API.md, "Tokens").
///
/// Which sessions: `sid` (one session id), `sid_prefix` (ids that start with it), `system` (sessions of that
/// system); those present must all match. Without any of them, `sub` is taken as a session id. What: `scope`, a
/// space-separated string (RFC 8693) or an array of `read`, `post`, `admin`, `create`. When: `exp` (required) and
/// `nbf`. Server-minted tokens also carry `sep` (the session's epoch) and `gen` (its token generation), so that a
/// token dies with its session and with a revocation. A value type.
package struct TokenClaims: JWTPayload, Equatable {
    package var exp: ExpirationClaim?
    var nbf: NotBeforeClaim?
    var iat: IssuedAtClaim?
    package var sub: SubjectClaim?
    package var sid: String?
    package var sidPrefix: String?
    package var system: String?
    package var scope: [String]
    package var sep: UInt64?
    package var gen: UInt64?

    enum CodingKeys: String, CodingKey {
        case exp, nbf, iat, sub, sid, system, scope, sep, gen
        case sidPrefix = "sid_prefix"
    }

    package init(
        expiry: Date,
        sid: String,
        scope: AccessScope,
        epoch: UInt64,
        generation: UInt64,
        issuedAt: Date
    ) {
        exp = ExpirationClaim(value: expiry)
        iat = IssuedAtClaim(value: issuedAt)
        self.sid = sid
        self.scope = [scope.rawValue]
        sep = epoch
        gen = generation
    }

    package init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        exp = try container.decodeIfPresent(ExpirationClaim.self, forKey: .exp)
        nbf = try container.decodeIfPresent(NotBeforeClaim.self, forKey: .nbf)
        iat = try container.decodeIfPresent(IssuedAtClaim.self, forKey: .iat)
        sub = try container.decodeIfPresent(SubjectClaim.self, forKey: .sub)
        sid = try container.decodeIfPresent(String.self, forKey: .sid)
        sidPrefix = try container.decodeIfPresent(String.self, forKey: .sidPrefix)
        system = try container.decodeIfPresent(String.self, forKey: .system)
        if let list = try? container.decodeIfPresent([String].self, forKey: .scope) {
            scope = list
        } else {
            scope =
                try container.decodeIfPresent(String.self, forKey: .scope)?.split(separator: " ").map(String.init) ?? []
        }
        sep = try container.decodeIfPresent(UInt64.self, forKey: .sep)
        gen = try container.decodeIfPresent(UInt64.self, forKey: .gen)
    }

    package func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encodeIfPresent(exp, forKey: .exp)
        try container.encodeIfPresent(nbf, forKey: .nbf)
        try container.encodeIfPresent(iat, forKey: .iat)
        try container.encodeIfPresent(sub, forKey: .sub)
        try container.encodeIfPresent(sid, forKey: .sid)
        try container.encodeIfPresent(sidPrefix, forKey: .sidPrefix)
        try container.encodeIfPresent(system, forKey: .system)
        try container.encode(scope.joined(separator: " "), forKey: .scope)
        try container.encodeIfPresent(sep, forKey: .sep)
        try container.encodeIfPresent(gen, forKey: .gen)
    }

    /// jwt-kit calls this after the signature checked out: `exp` and `nbf` against the wall clock.
    package func verify(using algorithm: some JWTAlgorithm) async throws {
        try exp?.verifyNotExpired()
        try nbf?.verifyNotBefore()
    }
}
