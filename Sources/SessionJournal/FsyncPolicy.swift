/// When the journal forces its writes to stable storage.
///
/// Either way a process crash (SIGKILL included) loses no completed append: a commit is in the operating
/// system's page cache before the append completes. The policies differ on power loss or a kernel crash.
public enum FsyncPolicy: Sendable, Equatable, CustomStringConvertible {
    /// Every group commit is synced before its appends complete (SQLite `synchronous=FULL` in WAL mode, which
    /// syncs the WAL at each commit). An acknowledged append survives power loss.
    case perCommit
    /// Commits are not synced (`synchronous=NORMAL`); every `milliseconds` a passive checkpoint syncs the WAL.
    /// Power loss may lose the appends of the last interval; the journal stays consistent (a prefix survives).
    case interval(milliseconds: Int)

    /// Parses `per-commit` or `interval:MS` (MS a positive integer); nil for anything else.
    public init?(parsing text: String) {
        if text == "per-commit" {
            self = .perCommit
            return
        }
        let prefix = "interval:"
        guard text.hasPrefix(prefix), let ms = Int(text.dropFirst(prefix.count)), ms > 0 else { return nil }
        self = .interval(milliseconds: ms)
    }

    /// `per-commit` or `interval:MS`, the form `init(parsing:)` reads.
    public var description: String {
        switch self {
        case .perCommit: "per-commit"
        case .interval(let ms): "interval:\(ms)"
        }
    }
}
