/// What `--auth` comes to for a listening address: `auto` (the default) is `off` only where no other machine can
/// connect (a loopback address), so that a server reachable from a network is never open to whoever knows an id.
/// A value type.
public enum AuthMode: String, Sendable {
    /// Whoever knows a session's id may do anything with it.
    case off
    /// A token per session and scope.
    case jwt

    /// The mode `setting` (`auto`, `off` or `jwt`) means for a server listening on `host`.
    public init(setting: String, host: String) {
        switch setting {
        case "off": self = .off
        case "jwt": self = .jwt
        default: self = Self.isLoopback(host) ? .off : .jwt
        }
    }

    /// Whether `host` (an IPv4 address as `--host` takes it, or `localhost`) is reachable from this machine only.
    public static func isLoopback(_ host: String) -> Bool {
        if host == "localhost" { return true }
        let parts = host.split(separator: ".", omittingEmptySubsequences: false)
        return parts.count == 4 && parts[0] == "127" && parts.allSatisfy { UInt8($0) != nil }
    }
}
