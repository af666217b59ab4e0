/// One configuration key the server reads: its name, what it accepts, its default and a line saying what it does.
///
/// Every key has one `Setting`; the code reads it through the setting (`ConfigReader.int(_:)` and friends), so the
/// default in `--help`, the check of a given value and the value used are one. A flag is the key with `-` for `.`
/// (`--sessions-max-active`), an environment variable `FEEDBACKHOST_` and the key in capitals with `_` for `.`
/// (`FEEDBACKHOST_SESSIONS_MAX_ACTIVE`). A value type: safe to pass anywhere.
public struct Setting: Sendable, Hashable {
    /// What a setting accepts.
    public enum Kind: Sendable, Hashable {
        /// A whole number in the range.
        case integer(ClosedRange<Int>)
        /// Any text.
        case text
        /// One of these words.
        case choice([String])
        /// `true` or `false` (a bare flag is true; the environment also takes `yes`, `no`, `1`, `0`).
        case boolean
        /// A comma-separated list of text.
        case list
    }

    /// The key, e.g. `sessions.max.active`.
    public let key: String
    /// What it accepts.
    public let kind: Kind
    /// The value used when none is given, as it would be written on the command line.
    public let defaultValue: String
    /// What it does, in a line.
    public let summary: String
    /// Refuses a value the kind accepts but the setting does not (e.g. `fsync`'s `interval:MS`); returns what it
    /// accepts in words, or nil when the value is fine.
    let check: @Sendable (String) -> String?
    /// A secret: read from the environment only, refused on the command line (where `ps` shows it).
    public let environmentOnly: Bool

    /// Creates a setting; `check` refuses values beyond what the kind says.
    public init(
        _ key: String,
        _ kind: Kind,
        default defaultValue: String,
        _ summary: String,
        environmentOnly: Bool = false,
        check: @escaping @Sendable (String) -> String? = { _ in nil }
    ) {
        self.environmentOnly = environmentOnly
        self.key = key
        self.kind = kind
        self.defaultValue = defaultValue
        self.summary = summary
        self.check = check
    }

    /// `--sessions-max-active`.
    public var flag: String { "--" + key.replacingDots(with: "-") }

    /// `FEEDBACKHOST_SESSIONS_MAX_ACTIVE`.
    public var environmentName: String { Setting.environmentPrefix + key.replacingDots(with: "_").uppercased() }

    /// The prefix of the environment variables the server reads.
    public static let environmentPrefix = "FEEDBACKHOST_"

    /// What the setting accepts, in words, e.g. `a whole number from 1 to 65535`.
    public var accepted: String {
        switch kind {
        case .integer(let range):
            if range.upperBound == Int.max { return "a whole number from \(range.lowerBound) on" }
            return "a whole number from \(range.lowerBound) to \(range.upperBound)"
        case .text: return "text"
        case .choice(let words): return "one of " + words.joined(separator: ", ")
        case .boolean: return "true or false"
        case .list: return "a comma-separated list"
        }
    }

    /// Nil when `value` is acceptable, else what is wrong, in words that name the setting and what it takes.
    /// `fromEnvironment` accepts the environment's spellings of a boolean.
    public func problem(with value: String, fromEnvironment: Bool = false) -> String? {
        let refused = "\(fromEnvironment ? environmentName : flag) \"\(value)\" is not \(accepted)"
        switch kind {
        case .integer(let range):
            guard let number = Int(value.trimmingCharacters(in: [" "])), range.contains(number) else { return refused }
        case .choice(let words):
            guard words.contains(value) else { return refused }
        case .boolean:
            let spellings = fromEnvironment ? ["true", "false", "yes", "no", "1", "0"] : ["true", "false"]
            guard spellings.contains(value.lowercased()) else { return refused }
        case .text, .list:
            break
        }
        if let wanted = check(value) {
            return "\(fromEnvironment ? environmentName : flag) \"\(value)\" is not \(wanted)"
        }
        return nil
    }

    public static func == (lhs: Setting, rhs: Setting) -> Bool { lhs.key == rhs.key }
    public func hash(into hasher: inout Hasher) { hasher.combine(key) }
}

extension String {
    fileprivate func replacingDots(with separator: Character) -> String {
        String(map { $0 == "." ? separator : $0 })
    }

    fileprivate func trimmingCharacters(in set: Set<Character>) -> String {
        String(drop { set.contains($0) }.reversed().drop { set.contains($0) }.reversed())
    }
}
