import ConformanceChecks
import CurlClient
import Foundation
import JWTKit
import Logging
import Systems
import Testing
import Upstream

@testable import FeedbackService

/// A token without `kid` is checked by every key of its `alg`, whatever the order of `--auth-keys` (issue 30, item 4:
/// with an HS256 secret listed before an ES256 PEM, jwt-kit checked every kid-less token with the secret and refused
/// the ES256 ones); a token with a `kid` is checked by the key it names only.
@Suite(.timeLimit(.minutes(1)))
struct AuthKeyOrderTests {
    /// The order of the backend's key files in `--auth-keys`.
    enum KeyOrder: String, CaseIterable, Sendable {
        case secretFirst
        case pemFirst

        var files: [String] {
            switch self {
            case .secretFirst: ["hs.key", "es.pem"]
            case .pemFirst: ["es.pem", "hs.key"]
            }
        }
    }

    static let signatureRefused = "the token's signature does not check out against any key this server accepts"
    static let malformed = "the token is not a well-formed JWT (header.payload.signature in base64url)"

    @Test(arguments: KeyOrder.allCases)
    func kidlessTokensOfEitherAlgorithmAreAccepted(_ order: KeyOrder) async throws {
        let server = try await KeyOrderServer.start(order.files)
        for kind in KeyKind.allCases {
            let token = try await server.keys.createToken(kind)
            #expect(TokenHeader(token: token)?.kid == nil)
            #expect(TokenHeader(token: token)?.alg == kind.algorithm)
            let response = try await server.create(token: token)
            #expect(response.status == 201, "\(kind) with \(order.files): \(response.bodyText)")
        }
        // Named by their kids, as before.
        for kind in KeyKind.allCases {
            let token = try await server.keys.createToken(kind, kid: kind.kid)
            #expect(try await server.create(token: token).status == 201, "\(kind) by its kid")
        }
        await server.stop()
    }

    @Test(arguments: KeyOrder.allCases)
    func aKidNamingAnotherKeyIsRefused(_ order: KeyOrder) async throws {
        let server = try await KeyOrderServer.start(order.files)
        for kind in KeyKind.allCases {
            let other = kind == .hs256 ? KeyKind.es256 : .hs256
            let token = try await server.keys.createToken(kind, kid: other.kid)
            let response = try await server.create(token: token)
            #expect(response.status == 401, "\(kind) under the kid of \(other) with \(order.files)")
        }
        await server.stop()
    }

    /// A kid no key has is refused, with its own reason, even when the key that signed the token is one the server
    /// holds (jwt-kit alone checked such a token with its first key, and let it in when that key had signed it).
    @Test(arguments: KeyOrder.allCases)
    func aKidNoKeyHasIsRefusedWhoeverSignedIt(_ order: KeyOrder) async throws {
        let server = try await KeyOrderServer.start(order.files)
        for kind in KeyKind.allCases {
            let token = try await server.keys.createToken(kind, kid: "retired-2025")
            let response = try await server.create(token: token)
            #expect(response.status == 401, "\(kind) under an unknown kid with \(order.files)")
            let detail = jsonObject(response.bodyText)["detail"] as? String
            #expect(detail?.contains("names a key (kid) this server does not hold") == true, "\(detail ?? "")")
        }
        await server.stop()
    }

    @Test(arguments: KeyOrder.allCases)
    func aKidlessTokenOfAKeyTheServerDoesNotHoldIsRefused(_ order: KeyOrder) async throws {
        let server = try await KeyOrderServer.start(order.files)
        let strangers = BackendKeys(hs256Secret: "another-secret-that-this-server-was-never-given")
        for kind in KeyKind.allCases {
            let response = try await server.create(token: try await strangers.createToken(kind))
            #expect(response.status == 401, "\(kind) with \(order.files)")
            #expect(jsonObject(response.bodyText)["detail"] as? String == Self.signatureRefused)
        }
        await server.stop()
    }

    /// Every kind of key file in every rotation of its order, through `TokenVerifier` as the server builds it:
    /// kid-less tokens of each key check out, expired ones say so, strangers' and malformed ones are refused.
    @Test func everyKindOfKeyChecksItsKidlessTokensInAnyOrder() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("key-order-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let keys = BackendKeys()
        let rsaPEM = try await offPool {
            try AuthTokenTests.openssl(["genpkey", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:2048"])
        }
        let rsa = try Insecure.RSA.PrivateKey(pem: rsaPEM)
        let jwksKey = ES256PrivateKey()
        let point = try #require(jwksKey.publicKey.parameters)
        // No `alg`: the key's type and curve say which tokens it checks.
        let jwks = #"{"keys":[{"kty":"EC","crv":"P-256","kid":"jw","x":"\#(point.x)","y":"\#(point.y)"}]}"#
        let files = [
            "hs.key": keys.hs256Secret, "es.pem": keys.es256.publicKey.pemRepresentation,
            "rs.pem": rsa.publicKey.pemRepresentation, "keys.json": jwks,
        ]
        for (name, contents) in files { try Data(contents.utf8).write(to: folder.appendingPathComponent(name)) }
        let names = ["hs.key", "es.pem", "rs.pem", "keys.json"]
        for rotation in 0..<names.count {
            let order = Array(names[rotation...] + names[..<rotation])
            var verificationKeys = VerificationKeys()
            for name in order { try verificationKeys.addFile(folder.appendingPathComponent(name).path) }
            let verifier = TokenVerifier(keys: verificationKeys, cacheCapacity: 10)
            for kind in KeyKind.allCases {
                let token = try await keys.createToken(kind)
                #expect((try? await verifier.verify(token).get()) != nil, "\(kind) with \(order)")
            }
            let rs256 = JWTKeyCollection()
            await rs256.add(rsa: rsa, digestAlgorithm: .sha256)
            #expect((try? await verifier.verify(try await rs256.sign(BackendKeys.claims())).get()) != nil, "\(order)")
            let jw = JWTKeyCollection()
            await jw.add(ecdsa: jwksKey)
            #expect((try? await verifier.verify(try await jw.sign(BackendKeys.claims())).get()) != nil, "\(order)")
            let expired = try await keys.createToken(.es256, lifetime: -30)
            #expect(await verifier.verify(expired) == .failure(.expired("the token has expired; get a new one")))
            let strangers = BackendKeys(hs256Secret: "another-secret-that-this-server-was-never-given")
            for kind in KeyKind.allCases {
                let token = try await strangers.createToken(kind)
                #expect(await verifier.verify(token) == .failure(.invalid(Self.signatureRefused)), "\(kind)")
            }
            let malformed = "bm90IGpzb24.e30.c2lnbmF0dXJl"
            #expect(await verifier.verify(malformed) == .failure(.invalid(Self.malformed)))
        }
    }

    /// A JWKS whose key has no `kid` (RFC 7517 makes it optional; jwt-kit refuses such a key): its kid-less tokens are
    /// accepted, a stranger's refused.
    @Test func aJWKSKeyWithoutAKidChecksKidlessTokens() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("kidless-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let key = ES256PrivateKey()
        let point = try #require(key.publicKey.parameters)
        let jwks = #"{"keys":[{"kty":"EC","crv":"P-256","alg":"ES256","x":"\#(point.x)","y":"\#(point.y)"}]}"#
        let file = folder.appendingPathComponent("keys.json")
        try Data(jwks.utf8).write(to: file)
        var verificationKeys = VerificationKeys()
        try verificationKeys.addFile(file.path)
        let verifier = TokenVerifier(keys: verificationKeys, cacheCapacity: 10)
        let signer = JWTKeyCollection()
        await signer.add(ecdsa: key)
        #expect((try? await verifier.verify(try await signer.sign(BackendKeys.claims())).get()) != nil)
        let stranger = JWTKeyCollection()
        await stranger.add(ecdsa: ES256PrivateKey())
        let refused = await verifier.verify(try await stranger.sign(BackendKeys.claims()))
        #expect(refused == .failure(.invalid(Self.signatureRefused)))
    }

    /// The two kinds of backend key the order tests swap.
    enum KeyKind: String, CaseIterable, Sendable {
        case hs256
        case es256

        var algorithm: String { rawValue.uppercased() }
        /// The kid of its file: the file's name without its extension.
        var kid: String { self == .hs256 ? "hs" : "es" }
    }

    /// A backend's signing keys: an HS256 secret and an ES256 private key, each signing with or without a kid.
    struct BackendKeys: Sendable {
        let hs256Secret: String
        let es256 = ES256PrivateKey()

        init(hs256Secret: String = "a-backend-secret-of-at-least-32-bytes-for-tests") {
            self.hs256Secret = hs256Secret
        }

        static func claims(lifetime: Double = 300) -> BackendClaims {
            BackendClaims(
                exp: ExpirationClaim(value: Date().addingTimeInterval(lifetime)),
                system: "counter",
                scope: "create"
            )
        }

        /// A `create` token for the counter system, its header naming `kid` (none by default).
        func createToken(_ kind: KeyKind, kid: String? = nil, lifetime: Double = 300) async throws -> String {
            let collection = JWTKeyCollection()
            switch kind {
            case .hs256: await collection.add(hmac: HMACKey(from: hs256Secret), digestAlgorithm: .sha256)
            case .es256: await collection.add(ecdsa: es256)
            }
            return try await collection.sign(
                Self.claims(lifetime: lifetime),
                kid: kid.map { JWKIdentifier(string: $0) }
            )
        }
    }

    /// The real server on 127.0.0.1:0 with `--auth jwt` and the backend's key files in the order given (no server key:
    /// creating a session needs a backend token), in a temporary folder removed by `stop()`.
    struct KeyOrderServer {
        let application: ServiceApplication
        let port: Int
        let client: CheckedFetcher
        let keys: BackendKeys
        let folder: URL

        static func start(_ files: [String]) async throws -> KeyOrderServer {
            let folder = FileManager.default.temporaryDirectory.appendingPathComponent("key-order-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            let keys = BackendKeys()
            let contents = ["hs.key": keys.hs256Secret, "es.pem": keys.es256.publicKey.pemRepresentation]
            for name in files {
                try Data(contents[name, default: ""].utf8).write(to: folder.appendingPathComponent(name))
            }
            let reader = ServiceApplication.defaultReader(
                arguments: [
                    "feedback-host", "--host", "127.0.0.1", "--port", "0", "--data-dir", "none", "--auth", "jwt",
                    "--auth-keys", files.map { folder.appendingPathComponent($0).path }.joined(separator: ","),
                ],
                environment: [:]
            )
            let application = try ServiceApplication.build(
                reader: reader,
                systems: [HostedSystem(CounterSystem())],
                logger: Logger(label: "auth-key-order-tests", factory: { _ in SwiftLogNoOpLogHandler() })
            )
            let port = try application.start()
            return KeyOrderServer(
                application: application,
                port: port,
                client: CheckedFetcher(),
                keys: keys,
                folder: folder
            )
        }

        /// POST /v1/sessions for a counter with `Authorization: Bearer token`.
        func create(token: String) async throws -> UpstreamResponse {
            var headers = UpstreamHeaders()
            headers.add("Authorization", "Bearer \(token)")
            headers.add("Content-Type", "application/json")
            return try await client.fetch(
                UpstreamRequest(
                    method: "POST",
                    url: "http://127.0.0.1:\(port)/v1/sessions",
                    headers: headers,
                    body: Array(#"{"system":"counter"}"#.utf8),
                    totalTimeoutMilliseconds: 10_000
                )
            )
        }

        func stop() async {
            await client.shutdown()
            await application.shutdown(deadline: .seconds(2))
            try? FileManager.default.removeItem(at: folder)
        }
    }
}
