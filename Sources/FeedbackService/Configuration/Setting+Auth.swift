/// The token settings (`--auth` and `auth.*`, docs/API.md "Tokens"); `Setting.service` lists them.
extension Setting {
    static let auth = Setting(
        "auth",
        .choice(["auto", "off", "jwt"]),
        default: "auto",
        "jwt: a token per session and scope (docs/API.md); off: whoever knows a session's id may do anything with it;"
            + " auto: off when --host is a loopback address (127.x.x.x), else jwt"
    )
    static let authCreate = Setting(
        "auth.create",
        .choice(["token", "open"]),
        default: "token",
        "with auth jwt, creating a session needs a backend token with the create scope (token), or nothing (open)"
    )
    static let authKeyFile = Setting(
        "auth.key.file",
        .text,
        default: "",
        "the server's own HS256 secret (32+ bytes): it mints read, post and admin tokens for each new session"
    )
    static let authPreviousKeyFile = Setting(
        "auth.previous.key.file",
        .text,
        default: "",
        "the server's previous secret, still accepted for the tokens it signed (key rotation)"
    )
    static let authKeys = Setting(
        "auth.keys",
        .list,
        default: "",
        "the backend's key files: ES256 or RS256 public keys (PEM; kid: the file's name), a JWKS, HS256 secrets"
    )
    static let authSecret = Setting(
        "auth.hs256.secret",
        .text,
        default: "",
        "the backend's HS256 secret (32+ bytes), from the environment only (kid: env)",
        environmentOnly: true
    )
    static let authTokenTTL = Setting(
        "auth.token.ttl.s",
        .integer(1...31_536_000),
        default: "86400",
        "how long the tokens the server mints are valid, in seconds"
    )
    static let authCacheSize = Setting(
        "auth.cache.size",
        .integer(1...10_000_000),
        default: "100000",
        "verified tokens remembered until they expire, so that checking one again costs a hash lookup"
    )
}
