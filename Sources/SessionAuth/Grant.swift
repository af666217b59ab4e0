import JWTKit
package import SessionRuntime

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// What a verified token allows: which sessions (every constraint present must match), the strongest session
/// scope, whether it may create sessions, and until when. A value type; cached per token by `GrantCache`.
package struct Grant: Sendable, Equatable {
    /// The one session id the token names, if it names one.
    package var sessionID: SessionID?
    /// A prefix every session id must start with.
    var idPrefix: String?
    /// The system every session must run.
    package var system: String?
    /// The strongest of `read`, `post`, `admin` it holds; nil when it holds none (a create-only token).
    package var scope: AccessScope?
    /// Whether it may create sessions.
    package var mayCreate: Bool
    /// `exp`, in seconds since 1970.
    package var expiry: Double
    /// Server-minted tokens: the session's epoch and token generation they were minted for.
    package var minted: (epoch: UInt64, generation: UInt64)?

    package static func == (lhs: Grant, rhs: Grant) -> Bool {
        lhs.sessionID == rhs.sessionID && lhs.idPrefix == rhs.idPrefix && lhs.system == rhs.system
            && lhs.scope == rhs.scope && lhs.mayCreate == rhs.mayCreate && lhs.expiry == rhs.expiry
            && lhs.minted?.epoch == rhs.minted?.epoch && lhs.minted?.generation == rhs.minted?.generation
    }

    /// The grant of verified claims, or why the claims grant nothing, in words for the client.
    package init(claims: TokenClaims) throws(TokenRejection) {
        guard let exp = claims.exp else {
            throw .unusable("the token has no exp claim; FeedbackHost accepts only tokens that expire")
        }
        expiry = exp.value.timeIntervalSince1970
        if let sid = claims.sid {
            guard let id = SessionID(sid) else { throw .unusable("the token's sid claim is not a session id") }
            sessionID = id
        }
        idPrefix = claims.sidPrefix
        system = claims.system
        if sessionID == nil, idPrefix == nil, system == nil, let subject = claims.sub?.value {
            guard let id = SessionID(subject) else {
                throw .unusable("the token names no session: give it a sid, sid_prefix or system claim")
            }
            sessionID = id
        }
        guard sessionID != nil || idPrefix != nil || system != nil else {
            throw .unusable("the token names no session: give it a sid, sid_prefix or system claim")
        }
        var strongest: AccessScope?
        var create = false
        for word in claims.scope {
            guard let scope = AccessScope(rawValue: word) else { continue }
            if scope == .create {
                create = true
            } else if strongest.map({ scope > $0 }) ?? true {
                strongest = scope
            }
        }
        guard strongest != nil || create else {
            throw .unusable("the token's scope claim holds none of read, post, inspect, admin, create")
        }
        scope = strongest
        mayCreate = create
        if let epoch = claims.sep, let generation = claims.gen { minted = (epoch, generation) }
    }

    /// Whether the token names its sessions by an id prefix.
    package var coversByPrefix: Bool { idPrefix != nil }

    /// Whether the token covers a session with this id and system (nil: unknown, e.g. not created yet).
    package func covers(_ id: SessionID, system name: String?) -> Bool {
        if let sessionID, sessionID != id { return false }
        if let idPrefix, !id.description.hasPrefix(idPrefix) { return false }
        if let system, system != name { return false }
        return true
    }

    /// Whether the token holds `needed` (on a session it covers).
    package func holds(_ needed: AccessScope) -> Bool {
        if needed == .create { return mayCreate }
        return scope?.implies(needed) ?? false
    }

    /// Whether it has expired at `now` (seconds since 1970).
    func isExpired(at now: Double) -> Bool { now >= expiry }
}

/// Why a token grants nothing: for a 401 whose message tells the client what to fix (never the token itself).
package enum TokenRejection: Error, Sendable, Equatable {
    /// The signature, the format or the key did not check out.
    case invalid(String)
    /// Signed and valid, but expired or not yet valid.
    case expired(String)
    /// Signed, but its claims grant nothing FeedbackHost understands.
    case unusable(String)

    /// The message for the problem's detail.
    var message: String {
        switch self {
        case .invalid(let text), .expired(let text), .unusable(let text): text
        }
    }
}
