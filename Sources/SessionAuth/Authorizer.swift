import FeedbackJSON
package import SessionRuntime

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The policy of `--auth jwt`: which token a route needs and whether a grant meets it (a minted token against the
/// live session's epoch and token generation, `TokenGeneration`), and the server's minting. Answers are `APIError`s
/// whose messages say what to do and never quote a token.
///
/// Thread-safe: immutable but for the verifier's cache, which has its own lock.
package final class Authorizer: Sendable {
    /// What a route needs.
    package enum Requirement: Sendable {
        /// A scope on the session of the path's `{id}`.
        case session(AccessScope)
        /// Creating a session (POST /v1/sessions, PUT /v1/sessions/{id}).
        case creation
        /// A scope on every session the answer shows (the list of sessions): the handler shows only the sessions
        /// the token covers.
        case listing(AccessScope)
    }

    package let verifier: TokenVerifier
    package let minter: TokenMinter?
    package let creation: AuthConfiguration.Creation

    package init(configuration: AuthConfiguration) {
        var keys = configuration.keys
        let minter = configuration.serverSecret.map {
            TokenMinter(secret: $0, lifetime: configuration.mintedLifetime)
        }
        if let secret = configuration.serverSecret, let minter {
            keys.addServerSecret(secret, kid: minter.kid)
        }
        if configuration.loadProblem != nil { keys = VerificationKeys() }
        verifier = TokenVerifier(keys: keys, cacheCapacity: configuration.cacheCapacity)
        self.minter = minter
        creation = configuration.creation
    }

    /// The 401 for a request without a token.
    package static func missing(streamRoute: Bool) -> APIError {
        let where_ =
            streamRoute
            ? "Authorization: Bearer <token>, the \(BearerToken.cookieName) cookie or ?\(BearerToken.queryName)="
            : "Authorization: Bearer <token>"
        return APIError(.tokenRequired, "this server requires a token: send it as \(where_)")
    }

    /// The 401 for a token that does not check out.
    package static func rejected(_ rejection: TokenRejection) -> APIError {
        APIError(.tokenInvalid, rejection.message)
    }

    /// Whether `grant` allows a request on session `id` needing `scope`. `session` is the live session (its system,
    /// epoch and current token generation), nil when there is none (the handler then answers 404 if the token covers
    /// the id). A minted token is compared with the session's generation at each request, also when its grant came
    /// from the `GrantCache`, which keeps what a token says, never a verdict.
    package func check(
        _ grant: Grant,
        scope: AccessScope,
        id: SessionID,
        session: (system: String, epoch: UInt64, tokenGeneration: UInt64)?
    ) throws(APIError) {
        guard grant.covers(id, system: session?.system) else {
            throw APIError(
                .insufficientScope,
                "this token is for other sessions; use a token issued for session \(id)",
                extra: ["scope": .string(scope.rawValue)]
            )
        }
        if let minted = grant.minted, let session {
            guard minted.epoch == session.epoch, minted.generation == session.tokenGeneration else {
                throw APIError(
                    .tokenInvalid,
                    "this token of session \(id) was revoked (or the session was created anew); ask its admin for a new one"
                )
            }
        }
        guard grant.holds(scope) else {
            let held = grant.scope?.rawValue ?? "none"
            throw APIError(
                .insufficientScope,
                "this token allows \(held) on session \(id); this request needs \(scope.rawValue)"
                    + " (read < post < inspect < admin): use a token with that scope",
                extra: ["scope": .string(scope.rawValue)]
            )
        }
    }

    /// Whether `grant` allows a list of sessions needing `scope` (each session shown is one it covers).
    package func checkListing(_ grant: Grant, scope: AccessScope) throws(APIError) {
        guard grant.holds(scope) else {
            throw APIError(
                .insufficientScope,
                "this token allows \(grant.scope?.rawValue ?? "none"); listing sessions needs \(scope.rawValue)"
                    + " (read < post < inspect < admin): use a token with that scope",
                extra: ["scope": .string(scope.rawValue)]
            )
        }
    }

    /// Whether `grant` may create a session of `system` under `id` (nil: an id the server picks).
    package func checkCreation(_ grant: Grant, id: SessionID?, system: String?) throws(APIError) {
        guard grant.mayCreate else {
            throw APIError(
                .insufficientScope,
                "creating a session needs a token with the create scope, signed by this deployment's backend",
                extra: ["scope": .string("create")]
            )
        }
        guard let id else {
            guard grant.sessionID == nil, grant.idPrefix == nil else {
                throw APIError(
                    .insufficientScope,
                    "this token creates sessions only under the id or id prefix it names: use PUT /v1/sessions/{id}",
                    extra: ["scope": .string("create")]
                )
            }
            if let allowed = grant.system, let system, allowed != system {
                throw Self.otherSystem(allowed)
            }
            return
        }
        if let allowed = grant.system, let system, allowed != system { throw Self.otherSystem(allowed) }
        let idAllowed =
            (grant.sessionID.map { $0 == id } ?? true) && (grant.idPrefix.map { id.description.hasPrefix($0) } ?? true)
        guard idAllowed else {
            throw APIError(
                .insufficientScope,
                "this token may not create a session with the id \(id): choose an id it names",
                extra: ["scope": .string("create")]
            )
        }
    }

    private static func otherSystem(_ allowed: String) -> APIError {
        APIError(
            .insufficientScope,
            "this token creates sessions of the system \(allowed) only",
            extra: ["scope": .string("create")]
        )
    }

    /// A token of every minted scope for a session at its epoch and token generation, as the JSON members
    /// `"tokens":{...},"tokens_expire_at":T`; nil when the server has no key.
    package func mintedTokens(for id: SessionID, epoch: UInt64, generation: UInt64) -> String? {
        guard let minter else { return nil }
        let now = Date()
        var expiry = 0.0
        let members = AccessScope.minted.map { scope in
            let minted = minter.token(for: id, scope: scope, epoch: epoch, generation: generation, now: now)
            expiry = minted.expiry
            return #""\#(scope.rawValue)":"\#(minted.token)""#
        }
        return #""tokens":{\#(members.joined(separator: ","))},"tokens_expire_at":\#(Int(expiry))"#
    }
}
