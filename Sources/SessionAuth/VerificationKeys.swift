import JWTKit

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The keys tokens are checked with, read and parsed once at start: the backend's HS256 secrets, its ES256 and
/// RS256 public keys (PEM), its JWKS, and the server's own keys (current and previous). Each has a `kid`; a token's
/// header `kid` picks its key (a kid no key has is refused, where jwt-kit alone would try its first key); a token whose
/// header names none is tried against every key of its header's `alg`, in the order the keys were given.
///
/// A value type; `keyRing()` builds jwt-kit's key collections from it.
package struct VerificationKeys: Sendable {
    enum Key: Sendable {
        case hmac(secret: [UInt8], kid: String)
        case es256(ES256PublicKey, kid: String)
        case rs256(Insecure.RSA.PublicKey, kid: String)
        case jwks(JWKS)
    }

    var keys: [Key] = []

    package init() {}

    package var isEmpty: Bool { keys.isEmpty }

    /// Adds the keys of a file: a PEM public key (ES256 or RS256, whose kid is the file's name without its
    /// extension), a JWKS (`{"keys": [...]}`), or else an HS256 secret (the file's bytes, one trailing newline
    /// dropped). Throws a sentence naming the file and what is wrong.
    package mutating func addFile(_ path: String, kid: String? = nil) throws(KeyFileError) {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw KeyFileError("cannot read the key file \(path)")
        }
        let text = String(decoding: data, as: UTF8.self)
        let name = kid ?? Self.stem(path)
        if text.contains("-----BEGIN") {
            if let key = try? ES256PublicKey(pem: text) {
                keys.append(.es256(key, kid: name))
            } else if let key = try? Insecure.RSA.PublicKey(pem: text) {
                keys.append(.rs256(key, kid: name))
            } else {
                throw KeyFileError("\(path) holds no ES256 (P-256) or RS256 (2048 bits or more) public key in PEM")
            }
        } else if text.first == "{" {
            guard var jwks = try? JSONDecoder().decode(JWKS.self, from: data) else {
                throw KeyFileError("\(path) is not a JWKS ({\"keys\": [...]})")
            }
            // RFC 7517 makes a key's `kid` optional, and jwt-kit refuses a key without one (which left every token
            // refused). Tokens without a `kid` are checked by each key of their `alg` (`KeyRing`): a name of ours
            // serves for those, and no token names it.
            for index in jwks.keys.indices where jwks.keys[index].keyIdentifier == nil {
                jwks.keys[index].keyIdentifier = JWKIdentifier(string: "\(name)#\(index)")
            }
            keys.append(.jwks(jwks))
        } else {
            try addSecret(Array(data), kid: name, origin: path)
        }
    }

    /// Adds an HS256 secret; one trailing newline is dropped.
    package mutating func addSecret(_ bytes: [UInt8], kid: String, origin: String) throws(KeyFileError) {
        var secret = bytes
        if secret.last == UInt8(ascii: "\n") { secret.removeLast() }
        if secret.last == UInt8(ascii: "\r") { secret.removeLast() }
        guard secret.count >= 32 else {
            throw KeyFileError("the HS256 secret of \(origin) has \(secret.count) bytes; use 32 or more random bytes")
        }
        keys.append(.hmac(secret: secret, kid: kid))
    }

    /// Adds the server's own secret (`auth.key.file`, `auth.previous.key.file`) exactly as it signs with it: its
    /// bytes were read and checked once (`ServiceApplication.serverKey`), and trimming them again here would verify
    /// with another key than the one the tokens were minted with.
    package mutating func addServerSecret(_ bytes: [UInt8], kid: String) {
        keys.append(.hmac(secret: bytes, kid: kid))
    }

    /// jwt-kit's collections: one holding every key, and one per key for tokens without a `kid` (`KeyRing`).
    func keyRing() async throws -> KeyRing {
        var singles: [KeyRing.Single] = []
        for key in keys { singles += try await Self.singles(of: key) }
        return KeyRing(named: try await collection(), kids: Set(keys.flatMap { Self.kids(of: $0) }), singles: singles)
    }

    /// The `kid`s `key` is known by: a token naming another is refused (`KeyRing.UnknownKey`).
    private static func kids(of key: Key) -> [String] {
        switch key {
        case .hmac(_, let kid), .es256(_, let kid), .rs256(_, let kid): [kid]
        case .jwks(let jwks): jwks.keys.compactMap { $0.keyIdentifier?.string }
        }
    }

    /// jwt-kit's key collection holding every key.
    private func collection() async throws -> JWTKeyCollection {
        let collection = JWTKeyCollection()
        for key in keys { try await Self.add(key, to: collection) }
        return collection
    }

    private static func add(_ key: Key, to collection: JWTKeyCollection) async throws {
        switch key {
        case .hmac(let secret, let kid):
            await collection.add(hmac: HMACKey(from: secret), digestAlgorithm: .sha256, kid: JWKIdentifier(string: kid))
        case .es256(let key, let kid):
            await collection.add(ecdsa: key, kid: JWKIdentifier(string: kid))
        case .rs256(let key, let kid):
            await collection.add(rsa: key, digestAlgorithm: .sha256, kid: JWKIdentifier(string: kid))
        case .jwks(let jwks):
            try await collection.add(jwks: jwks)
        }
    }

    /// A collection of `key` alone, tagged with the `alg` of the tokens it checks; for a JWKS, one per key and
    /// algorithm.
    private static func singles(of key: Key) async throws -> [KeyRing.Single] {
        let algorithm: String
        switch key {
        case .hmac: algorithm = "HS256"
        case .es256: algorithm = "ES256"
        case .rs256: algorithm = "RS256"
        case .jwks(let jwks):
            var singles: [KeyRing.Single] = []
            for jwk in jwks.keys {
                for algorithm in algorithms(of: jwk) {
                    // jwt-kit gives a JWK without `alg` the first token's and keeps it: one collection per algorithm.
                    var fixed = jwk
                    fixed.algorithm = JWK.Algorithm(rawValue: algorithm)
                    let collection = JWTKeyCollection()
                    guard (try? await collection.add(jwk: fixed)) != nil else { continue }
                    singles.append(KeyRing.Single(algorithm: algorithm, collection: collection))
                }
            }
            return singles
        }
        let collection = JWTKeyCollection()
        try await add(key, to: collection)
        return [KeyRing.Single(algorithm: algorithm, collection: collection)]
    }

    /// The `alg`s of the tokens a JWK checks: its own `alg`, or without one those its type (and curve) fit.
    private static func algorithms(of jwk: JWK) -> [String] {
        if let algorithm = jwk.algorithm { return [algorithm.rawValue] }
        switch jwk.keyType {
        case .rsa: return ["RS256", "RS384", "RS512", "PS256", "PS384", "PS512"]
        case .ecdsa:
            switch jwk.curve?.rawValue {
            case "P-256": return ["ES256"]
            case "P-384": return ["ES384"]
            case "P-521": return ["ES512"]
            default: return ["ES256", "ES384", "ES512"]
            }
        case .octetKeyPair: return ["EdDSA"]
        default: return []
        }
    }

    private static func stem(_ path: String) -> String {
        let name = path.split(separator: "/").last.map(String.init) ?? path
        guard let dot = name.lastIndex(of: "."), dot != name.startIndex else { return name }
        return String(name[..<dot])
    }
}

/// A key file that cannot be used, in a sentence naming it.
package struct KeyFileError: Error, Sendable, CustomStringConvertible {
    package let description: String
    package init(_ description: String) { self.description = description }
}
