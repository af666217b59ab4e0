/// The command line and the `FEEDBACKHOST_` environment checked against the settings before anything starts: an
/// unknown flag or variable, a value of the wrong kind or out of range, a stray argument, each stops the start with
/// a line that names it and says what is accepted. `--help` and `--version` are answered here too.
///
/// Pure: no I/O; `feedback-host` prints what it returns.
public enum ConfigurationCheck {
    /// What the process does next.
    public enum Outcome: Sendable, Equatable {
        /// Start the server.
        case run
        /// Print `help(for:)` and exit 0.
        case help
        /// Print the version and exit 0.
        case version
    }

    /// Checks `arguments` (with the program's name first) and the variables of `environment` that carry the
    /// prefix against `settings`. Throws one error listing every problem found.
    public static func check(
        arguments: [String],
        environment: [String: String],
        settings: [Setting]
    ) throws(ConfigurationError) -> Outcome {
        let byFlag = Dictionary(settings.map { ($0.flag, $0) }, uniquingKeysWith: { first, _ in first })
        let byVariable = Dictionary(settings.map { ($0.environmentName, $0) }, uniquingKeysWith: { first, _ in first })
        var problems: [String] = []
        var outcome = Outcome.run
        var options: [(flag: String, values: [String])] = []
        for argument in arguments.dropFirst() {
            if argument == "--help" || argument == "-h" {
                outcome = .help
            } else if argument == "--version" {
                if outcome == .run { outcome = .version }
            } else if argument.hasPrefix("--") {
                if let equals = argument.firstIndex(of: "=") {
                    options.append((String(argument[..<equals]), [String(argument[argument.index(after: equals)...])]))
                } else {
                    options.append((argument, []))
                }
            } else if options.isEmpty || options[options.count - 1].flag.contains("=") {
                problems.append("unexpected argument \"\(argument)\"; options are --name value (see --help)")
            } else {
                options[options.count - 1].values.append(argument)
            }
        }
        if outcome != .run { return outcome }
        for (flag, values) in options {
            guard let setting = byFlag[flag] else {
                problems.append("unknown option \(flag)" + suggestion(flag, among: Array(byFlag.keys)))
                continue
            }
            if setting.environmentOnly {
                problems.append(
                    "\(flag) is a secret and the process list would show it: set \(setting.environmentName) instead"
                )
                continue
            }
            switch (setting.kind, values.count) {
            case (.boolean, 0):
                continue
            case (_, 0):
                problems.append("\(flag) needs a value: \(setting.accepted)")
            case (.list, _):
                continue
            case (_, 1):
                if let problem = setting.problem(with: values[0]) { problems.append(problem) }
            default:
                problems.append("\(flag) takes one value, not \(values.count): \(values.joined(separator: " "))")
            }
        }
        for (name, value) in environment.sorted(by: { $0.key < $1.key }) where name.hasPrefix(Setting.environmentPrefix)
        {
            guard let setting = byVariable[name] else {
                problems.append(
                    "unknown environment variable \(name)" + suggestion(name, among: Array(byVariable.keys))
                )
                continue
            }
            if let problem = setting.problem(with: value, fromEnvironment: true) { problems.append(problem) }
        }
        guard problems.isEmpty else { throw ConfigurationError(problems: problems) }
        return .run
    }

    /// The text `--help` prints: the usage line, then every setting with what it accepts and its default.
    public static func help(for settings: [Setting], program: String = "feedback-host") -> String {
        var text = """
            usage: \(program) [--name value]...

            Every option is also an environment variable: --sessions-max-active is \(Setting.environmentPrefix)SESSIONS_MAX_ACTIVE.
            Flags win over the environment; what neither gives takes the default.

            options:

            """
        for setting in settings {
            let shown = setting.defaultValue.isEmpty ? "none" : setting.defaultValue
            text += "  \(setting.flag) (\(setting.accepted); default \(shown))\n      \(setting.summary)\n"
        }
        text += "  --help\n      print this and exit\n  --version\n      print the version and exit\n"
        return text
    }

    /// Flags and variables of earlier versions, with the name that replaced them.
    static let renamed = [
        "--max-sessions": "--sessions-max-active",
        "\(Setting.environmentPrefix)MAX_SESSIONS": "\(Setting.environmentPrefix)SESSIONS_MAX_ACTIVE",
        "--session-ttl-ms": "--session-idle-ms",
        "\(Setting.environmentPrefix)SESSION_TTL_MS": "\(Setting.environmentPrefix)SESSION_IDLE_MS",
    ]

    /// `; did you mean --data-dir?` when a known name is one typo away (or differs only in `_` and `-`).
    private static func suggestion(_ name: String, among known: [String]) -> String {
        if let now = renamed[name] { return "; it was renamed \(now)" }
        let normalized = name.lowercased().replacing("_", with: "-")
        if let same = known.first(where: { $0.lowercased().replacing("_", with: "-") == normalized }) {
            return "; did you mean \(same)?"
        }
        let close = known.map { ($0, distance(name, $0)) }.filter { $0.1 <= 2 }.min { $0.1 < $1.1 }
        return close.map { "; did you mean \($0.0)?" } ?? "; see --help for the options"
    }

    /// Levenshtein distance, for suggestions only.
    private static func distance(_ a: String, _ b: String) -> Int {
        let a = Array(a.utf8)
        let b = Array(b.utf8)
        var previous = Array(0...b.count)
        for (i, x) in a.enumerated() {
            var current = [i + 1] + Array(repeating: 0, count: b.count)
            for (j, y) in b.enumerated() {
                current[j + 1] = min(previous[j + 1] + 1, current[j] + 1, previous[j] + (x == y ? 0 : 1))
            }
            previous = current
        }
        return previous[b.count]
    }
}

/// The start refused: every problem found in the command line and the environment, one per line.
public struct ConfigurationError: Error, Sendable, Equatable, CustomStringConvertible {
    /// One sentence per problem.
    public let problems: [String]

    /// The problems, one per line.
    public var description: String { problems.joined(separator: "\n") }
}
