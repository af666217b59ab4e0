import Foundation
import HTTPServer
import JWTKit
import Testing

@testable import FeedbackService

/// The pieces of `Auth/` without sockets: scopes, claims to grants, where a token is found, the cache, and minted
/// tokens verified by jwt-kit (the current and the previous server key; not another).
@Suite(.timeLimit(.minutes(1)))
struct AuthPolicyTests {
    static let id = SessionID("3q2-7wAAAAAAAAAAAAAAAA")!
    static let expiry = ExpirationClaim(value: Date().addingTimeInterval(300))

    func claims(_ scope: [String], sid: String? = nil, prefix: String? = nil, system: String? = nil) -> TokenClaims {
        var claims = TokenClaims(
            expiry: Date().addingTimeInterval(300),
            sid: sid ?? "",
            scope: .read,
            epoch: 0,
            generation: 0,
            issuedAt: Date()
        )
        claims.sid = sid
        claims.sidPrefix = prefix
        claims.system = system
        claims.scope = scope
        claims.sep = nil
        claims.gen = nil
        return claims
    }

    @Test func autoRequiresTokensUnlessOnlyThisMachineCanConnect() {
        for host in ["127.0.0.1", "127.1.2.3", "localhost"] {
            #expect(AuthMode(setting: "auto", host: host) == .off, "\(host)")
            #expect(AuthMode(setting: "jwt", host: host) == .jwt, "\(host)")
        }
        for host in ["0.0.0.0", "10.0.0.7", "192.168.1.2", "", "127.0.0", "127.0.0.256", "128.0.0.1"] {
            #expect(AuthMode(setting: "auto", host: host) == .jwt, "\(host)")
            #expect(AuthMode(setting: "off", host: host) == .off, "\(host)")
        }
    }

    @Test func strongerScopesImplyWeakerOnesAndCreateStandsApart() {
        #expect(AccessScope.admin.implies(.post) && AccessScope.post.implies(.read) && AccessScope.admin.implies(.read))
        #expect(!AccessScope.read.implies(.post) && !AccessScope.post.implies(.admin))
        #expect(!AccessScope.admin.implies(.create) && !AccessScope.create.implies(.read))
    }

    @Test func claimsBecomeAGrantOfTheStrongestScopeForTheSessionsTheyName() throws {
        let grant = try Grant(claims: claims(["read", "post"], sid: Self.id.description))
        #expect(grant.scope == .post && !grant.mayCreate)
        #expect(grant.covers(Self.id, system: "counter"))
        #expect(!grant.covers(SessionID("AAAAAAAAAAAAAAAAAAAAAA")!, system: "counter"))
        let bySystem = try Grant(claims: claims(["admin", "create"], system: "counter"))
        #expect(bySystem.covers(Self.id, system: "counter") && !bySystem.covers(Self.id, system: "notes"))
        #expect(!bySystem.covers(Self.id, system: nil))
        #expect(bySystem.holds(.create) && bySystem.holds(.read))
        let byPrefix = try Grant(claims: claims(["read"], prefix: "3q2-"))
        #expect(
            byPrefix.covers(Self.id, system: nil) && !byPrefix.covers(SessionID("AAAAAAAAAAAAAAAAAAAAAA")!, system: nil)
        )
        var bySubject = claims(["read"])
        bySubject.sub = SubjectClaim(value: Self.id.description)
        #expect(try Grant(claims: bySubject).sessionID == Self.id)
    }

    @Test func claimsThatGrantNothingAreRefusedWithAReason() {
        var noExpiry = claims(["read"], sid: Self.id.description)
        noExpiry.exp = nil
        #expect(throws: TokenRejection.self) { try Grant(claims: noExpiry) }
        #expect(throws: TokenRejection.self) { try Grant(claims: claims(["read"])) }
        #expect(throws: TokenRejection.self) { try Grant(claims: claims(["write"], sid: Self.id.description)) }
        #expect(throws: TokenRejection.self) { try Grant(claims: claims(["read"], sid: "not-an-id")) }
    }

    func request(_ headers: [(String, String)], query: String? = nil) -> Request {
        Request(
            head: RequestHead(method: .get, path: "/v1/sessions/x/stream", query: query, headers: HTTPHeaders(headers))
        )
    }

    @Test func theTokenComesFromTheHeaderAndOnTheStreamRouteAlsoFromTheCookieOrTheQuery() {
        #expect(BearerToken.find(in: request([("Authorization", "Bearer abc")]), streamRoute: false) == "abc")
        #expect(BearerToken.find(in: request([("Authorization", "bearer  abc ")]), streamRoute: false) == "abc")
        #expect(BearerToken.find(in: request([("Authorization", "Basic abc")]), streamRoute: true) == nil)
        let cookie = request([("Cookie", "a=b; feedbackhost_token=xyz; c=d")])
        #expect(BearerToken.find(in: cookie, streamRoute: true) == "xyz")
        #expect(BearerToken.find(in: cookie, streamRoute: false) == nil)
        let query = request([], query: "mode=patch&access_token=q1")
        #expect(BearerToken.find(in: query, streamRoute: true) == "q1")
        #expect(BearerToken.find(in: query, streamRoute: false) == nil)
    }

    @Test func theCacheForgetsExpiredGrantsAndStaysBounded() throws {
        let cache = GrantCache(capacity: 2)
        let grant = try Grant(claims: claims(["read"], sid: Self.id.description))
        let now = Date().timeIntervalSince1970
        cache.insert(grant, for: GrantCache.key("one"), now: now)
        #expect(cache.grant(for: GrantCache.key("one"), now: now) == grant)
        #expect(cache.grant(for: GrantCache.key("two"), now: now) == nil)
        #expect(cache.grant(for: GrantCache.key("one"), now: grant.expiry + 1) == nil)
        for index in 0..<5 { cache.insert(grant, for: GrantCache.key("t\(index)"), now: now) }
        #expect(cache.count <= 2)
    }

    @Test func mintedTokensCheckOutWithTheCurrentAndThePreviousKeyOnly() async throws {
        let current = Array("the-current-server-key-of-32-bytes-or-more".utf8)
        let previous = Array("the-previous-server-key-of-32-bytes-or-more".utf8)
        let other = Array("some-other-server-key-of-32-bytes-or-more!!".utf8)
        var keys = VerificationKeys()
        try keys.addSecret(previous, kid: TokenMinter.kid(of: previous), origin: "test")
        try keys.addSecret(current, kid: TokenMinter.kid(of: current), origin: "test")
        let verifier = TokenVerifier(keys: keys, cacheCapacity: 10)
        for secret in [current, previous] {
            let minted = TokenMinter(secret: secret, lifetime: .seconds(60))
                .token(for: Self.id, scope: .post, epoch: 7, generation: 1)
            let grant = try await verifier.verify(minted.token).get()
            #expect(grant.sessionID == Self.id && grant.scope == .post)
            #expect(grant.minted?.epoch == 7 && grant.minted?.generation == 1)
            #expect(verifier.cachedGrant(minted.token) == grant)
        }
        let foreign = TokenMinter(secret: other, lifetime: .seconds(60)).token(
            for: Self.id,
            scope: .admin,
            epoch: 7,
            generation: 1
        )
        guard case .failure(.invalid) = await verifier.verify(foreign.token) else {
            Issue.record("a token of another key was accepted")
            return
        }
    }

    @Test func aSecretGivenAsAFlagIsRefusedAndFromTheEnvironmentAccepted() throws {
        #expect(throws: ConfigurationError.self) {
            try ConfigurationCheck.check(
                arguments: ["feedback-host", "--auth-hs256-secret", "s"],
                environment: [:],
                settings: Setting.service
            )
        }
        let outcome = try ConfigurationCheck.check(
            arguments: ["feedback-host", "--auth", "jwt"],
            environment: ["FEEDBACKHOST_AUTH_HS256_SECRET": "a-secret-of-thirty-two-bytes-or-more"],
            settings: Setting.service
        )
        #expect(outcome == .run)
    }
}
