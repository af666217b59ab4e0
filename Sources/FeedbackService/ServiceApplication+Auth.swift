public import Configuration
import Logging
import SessionAuth

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension ServiceApplication {
    /// Why the token settings stop the start (`feedback-host` exits 2 with them): a key file that cannot be used, or
    /// tokens required (`--auth jwt`, or `auto` on an address other machines reach) without a key to check them.
    /// Empty when the server may start.
    public static func authStartProblems(_ reader: ConfigReader) -> [String] {
        authKeys(reader)?.problems ?? []
    }

    /// `--inspector`: on, off, or auto (on at a loopback address, where only this machine connects).
    static func inspectorOn(_ reader: ConfigReader) -> Bool {
        switch reader.string(.inspector) {
        case "on": true
        case "off": false
        default: AuthMode(setting: "auto", host: reader.string(.host)) == .off
        }
    }

    /// The `auth` keys: nil for `--auth off` (or `auto` on a loopback address). A key that cannot be used is logged
    /// (by file name, never its content) and leaves the server refusing every token: it fails closed. (The
    /// executable refuses to start with it first: `authStartProblems`.)
    static func authConfiguration(_ reader: ConfigReader, logger: Logger) -> AuthConfiguration? {
        guard let (keys, serverSecret, problems) = authKeys(reader) else { return nil }
        let creation = AuthConfiguration.Creation(rawValue: reader.string(.authCreate)) ?? .token
        if creation == .token, keys.isEmpty, serverSecret != nil {
            logger.warning(
                "auth: --auth-create token, but only the server's own key: no one can create a session",
                metadata: ["fix": "give the backend's keys (--auth-keys), or --auth-create open"]
            )
        }
        for problem in problems { logger.error("auth: every token is refused", metadata: ["problem": "\(problem)"]) }
        return AuthConfiguration(
            keys: keys,
            serverSecret: serverSecret,
            creation: creation,
            mintedLifetime: .seconds(reader.int(.authTokenTTL)),
            cacheCapacity: reader.int(.authCacheSize),
            loadProblem: problems.first
        )
    }

    /// The backend's keys and the server's secret as configured, with what is wrong with them; nil when tokens are
    /// off.
    private static func authKeys(
        _ reader: ConfigReader
    ) -> (keys: VerificationKeys, serverSecret: [UInt8]?, problems: [String])? {
        let host = reader.string(.host)
        let setting = reader.string(.auth)
        guard AuthMode(setting: setting, host: host) == .jwt else { return nil }
        var keys = VerificationKeys()
        var serverSecret: [UInt8]?
        var problems: [String] = []
        do throws(KeyFileError) {
            for path in reader.list(.authKeys) { try keys.addFile(path) }
            let secret = reader.string(.authSecret)
            if !secret.isEmpty { try keys.addSecret(Array(secret.utf8), kid: "env", origin: "auth.hs256.secret") }
            let previous = reader.string(.authPreviousKeyFile)
            if !previous.isEmpty {
                let bytes = try serverKey(previous)
                keys.addServerSecret(bytes, kid: TokenMinter.kid(of: bytes))
            }
            let current = reader.string(.authKeyFile)
            if !current.isEmpty { serverSecret = try serverKey(current) }
        } catch {
            problems.append(error.description)
        }
        if problems.isEmpty, keys.isEmpty, serverSecret == nil {
            let why =
                setting == "jwt"
                ? "--auth jwt needs keys"
                : "--host \(host) is reachable from other machines, so sessions need tokens (--auth auto) and keys"
            problems.append(
                why + ": --auth-key-file FILE with --auth-create open (the server mints each new session's tokens;"
                    + " make FILE with `head -c 32 /dev/urandom > FILE`), or your backend's keys (--auth-keys FILE,...,"
                    + " FEEDBACKHOST_AUTH_HS256_SECRET); or --auth off to let whoever knows a session's id use it"
            )
        }
        return (keys, serverSecret, problems)
    }

    /// A server secret file's bytes, at least 32 of them. A trailing newline (an editor's, `echo`'s) is dropped only
    /// when 32 bytes remain: `head -c 32 /dev/urandom` ends in a newline byte once in 256 times, and that byte is
    /// part of the key. Minting and verification both use these bytes as they are.
    static func serverKey(_ path: String) throws(KeyFileError) -> [UInt8] {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw KeyFileError(
                "cannot read the key file \(path): is it there (a mounted secret?) and readable by this user?"
            )
        }
        var bytes = Array(data)
        if bytes.count > 32, bytes.last == UInt8(ascii: "\n") { bytes.removeLast() }
        guard bytes.count >= 32 else {
            throw KeyFileError("the secret of \(path) has \(bytes.count) bytes; use 32 or more random bytes")
        }
        return bytes
    }
}
