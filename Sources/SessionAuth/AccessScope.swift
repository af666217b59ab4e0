/// What a token lets its bearer do with a session: `read` (GET, stream), `post` (post events; implies read),
/// `inspect` (the inspection routes: history, states, diffs, the list of sessions; implies post), `admin` (delete,
/// mint and revoke the session's tokens, forks; implies inspect). `create` is separate: it lets a backend's
/// token create sessions (of the systems the token names) and implies nothing on existing ones.
///
/// A value type.
public enum AccessScope: String, Sendable, CaseIterable, Comparable {
    case read
    case post
    case inspect
    case admin
    case create

    /// The rank among the session scopes; `create` ranks below them all, since it grants nothing on a session.
    var rank: Int {
        switch self {
        case .create: 0
        case .read: 1
        case .post: 2
        case .inspect: 3
        case .admin: 4
        }
    }

    /// Whether holding `self` allows what `needed` allows.
    package func implies(_ needed: AccessScope) -> Bool {
        if needed == .create || self == .create { return self == needed }
        return rank >= needed.rank
    }

    public static func < (lhs: AccessScope, rhs: AccessScope) -> Bool { lhs.rank < rhs.rank }

    /// The scopes a server mints for a new session, weakest first.
    static let minted: [AccessScope] = [.read, .post, .admin]
}
