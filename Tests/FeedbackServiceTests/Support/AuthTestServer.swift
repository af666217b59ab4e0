import ConformanceChecks
import CurlClient
import FeedbackService
import Foundation
import InMemoryLogging
import JWTKit
import Logging
import Systems
import Upstream

/// Claims as a backend would sign them (docs/API.md, "Tokens"): every member optional, so a test can leave any out.
struct BackendClaims: JWTPayload {
    var exp: ExpirationClaim?
    var nbf: NotBeforeClaim?
    var sid: String?
    var system: String?
    var scope: String?

    func verify(using algorithm: some JWTAlgorithm) async throws {}
}

/// An in-process server with `--auth jwt`, keys of its own making (an HS256 secret, an ES256 key pair, a server
/// key) in a temporary folder, a log captured in memory, and a client that sends any header.
struct AuthTestServer {
    let application: ServiceApplication
    let port: Int
    let client: CheckedFetcher
    let log: InMemoryLogHandler
    let signers: JWTKeyCollection
    let folder: URL

    static let hs256Secret = "a-backend-secret-of-at-least-32-bytes-for-tests"

    /// `keyFiles`: more of the backend's key files (name: contents), added to `--auth-keys`.
    /// `dataDirectory`: the journal's (and the revocations') folder; none by default. `serverKey`: the bytes of the
    /// server's own key file (`--auth-key-file`), a fixed text secret by default. `journalVFS`: the fault VFS's name,
    /// to make the journal's writes fail on command (`JournalFaultTests`).
    static func start(
        _ flags: [String] = [],
        keyFiles: [String: String] = [:],
        dataDirectory: String = "none",
        serverKey: [UInt8] = Array("the-server-key-for-minting-tokens-in-tests\n".utf8),
        journalVFS: String? = nil
    ) async throws -> AuthTestServer {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("auth-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let es256 = ES256PrivateKey()
        try Data(hs256Secret.utf8).write(to: folder.appendingPathComponent("hs.key"))
        try Data(es256.publicKey.pemRepresentation.utf8).write(to: folder.appendingPathComponent("es.pem"))
        try Data(serverKey).write(to: folder.appendingPathComponent("server.key"))
        var keyPaths = ["hs.key", "es.pem"].map { folder.appendingPathComponent($0).path }
        for (name, contents) in keyFiles {
            try Data(contents.utf8).write(to: folder.appendingPathComponent(name))
            keyPaths.append(folder.appendingPathComponent(name).path)
        }
        let signers = JWTKeyCollection()
        await signers.add(hmac: HMACKey(from: hs256Secret), digestAlgorithm: .sha256, kid: "hs")
        await signers.add(ecdsa: es256, kid: "es")
        let log = InMemoryLogHandler()
        var logger = Logger(label: "auth-tests", factory: { _ in log })
        logger.logLevel = .trace
        let reader = ServiceApplication.defaultReader(
            arguments: [
                "feedback-host", "--host", "127.0.0.1", "--port", "0", "--data-dir", dataDirectory, "--stream-drain-ms",
                "200",
                "--auth", "jwt", "--auth-keys", keyPaths.joined(separator: ","),
                "--auth-key-file", folder.appendingPathComponent("server.key").path,
            ] + flags,
            environment: [:]
        )
        let application = try ServiceApplication.build(
            reader: reader,
            systems: [HostedSystem(NotesSystem()), HostedSystem(CounterSystem())],
            logger: logger,
            journalVFS: journalVFS
        )
        let port = try application.start()
        return AuthTestServer(
            application: application,
            port: port,
            client: CheckedFetcher(),
            log: log,
            signers: signers,
            folder: folder
        )
    }

    /// A backend token signed with the key `kid` ("hs" or "es"), expiring `lifetime` seconds from now.
    func sign(
        kid: String = "hs",
        sid: String? = nil,
        system: String? = nil,
        scope: String,
        lifetime: Double = 300
    ) async throws -> String {
        let claims = BackendClaims(
            exp: ExpirationClaim(value: Date().addingTimeInterval(lifetime)),
            sid: sid,
            system: system,
            scope: scope
        )
        return try await signers.sign(claims, kid: JWKIdentifier(string: kid))
    }

    /// Sends a request with `Authorization: Bearer token` (when given) and any other headers.
    func send(
        _ method: String,
        _ path: String,
        token: String? = nil,
        body: String? = nil,
        headers: [String: String] = [:]
    ) async throws -> UpstreamResponse {
        var fields = UpstreamHeaders()
        if let token { fields.add("Authorization", "Bearer \(token)") }
        if body != nil { fields.add("Content-Type", "application/json") }
        for (name, value) in headers { fields.add(name, value) }
        return try await client.fetch(
            UpstreamRequest(
                method: method,
                url: "http://127.0.0.1:\(port)\(path)",
                headers: fields,
                body: body.map { Array($0.utf8) },
                totalTimeoutMilliseconds: 10_000
            )
        )
    }

    func reader(_ path: String, headers: [String] = []) throws -> SSEReader {
        try SSEReader(port: port, path: path, headers: headers)
    }

    /// The value of a Prometheus sample line (`name{labels}`), or 0 when absent.
    func metric(_ sample: String) async throws -> Double {
        let text = try await send("GET", "/metrics").bodyText
        for line in text.split(separator: "\n") where line.hasPrefix(sample + " ") {
            return Double(line.split(separator: " ").last ?? "") ?? 0
        }
        return 0
    }

    /// Every line the server logged, message and metadata, as one text.
    var loggedText: String {
        log.entries.map { "\($0.level) \($0.message) \($0.metadata)" }.joined(separator: "\n")
    }

    func stop() async {
        await client.shutdown()
        await application.shutdown(deadline: .seconds(2))
        try? FileManager.default.removeItem(at: folder)
    }
}
