/// Who may do what (`--auth` and the `auth.*` settings): off (anyone who knows a session's id may do anything with
/// it, as before), or JWTs per session and scope. An immutable value.
public struct AuthConfiguration: Sendable {
    /// How sessions are created when tokens are required.
    public enum Creation: String, Sendable {
        /// Creating needs a token with the `create` scope for the session's system (or its id, or an id prefix):
        /// the deployment's backend decides who may create.
        case token
        /// Anyone may create a session and gets its tokens in the answer (with a server key): like a new
        /// Mercure topic or a Liveblocks room whose creator hands out the read token.
        case open
    }

    /// The keys tokens are checked with (backend keys and the server's own).
    var keys: VerificationKeys
    /// The server's signing secret (`auth.key.file`); without it the server mints no tokens.
    var serverSecret: [UInt8]?
    /// How sessions are created.
    public var creation: Creation
    /// How long the tokens the server mints are valid.
    public var mintedLifetime: Duration
    /// Verified tokens remembered at most.
    public var cacheCapacity: Int
    /// A key that could not be loaded: every token is then refused (the check at start reports it first).
    var loadProblem: String?

    package init(
        keys: VerificationKeys,
        serverSecret: [UInt8]?,
        creation: Creation,
        mintedLifetime: Duration,
        cacheCapacity: Int,
        loadProblem: String? = nil
    ) {
        self.keys = keys
        self.serverSecret = serverSecret
        self.creation = creation
        self.mintedLifetime = mintedLifetime
        self.cacheCapacity = cacheCapacity
        self.loadProblem = loadProblem
    }
}
