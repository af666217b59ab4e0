/// The log format and the access log's settings, listed in `Setting.service` (see `AccessLog` in HTTPServer and
/// "Logging" in docs/API.md).
extension Setting {
    /// How log lines look; the access log's too unless `log.access` names a format.
    public static let logFormat = Setting(
        "log.format",
        .choice(["text", "json"]),
        default: "text",
        "text lines, or one JSON object per line (the container's default)"
    )
    /// Whether and how each answered request is logged.
    static let logAccess = Setting(
        "log.access",
        .choice(["on", "text", "json", "off"]),
        default: "on",
        "one line per answered request, buffered (route patterns, never session ids); on: in log.format"
    )
    /// The level access lines carry.
    static let logAccessLevel = Setting(
        "log.access.level",
        .choice(["trace", "debug", "info", "notice", "warning", "error", "critical"]),
        default: "info",
        "the level of access lines; they are written when it is at or above log.level"
    )
    /// nginx's `buffer=`.
    static let logAccessBufferBytes = Setting(
        "log.access.buffer.bytes",
        .integer(0...(16 * 1024 * 1024)),
        default: "65536",
        "access lines are written once this many bytes wait (0: at every line), by one writer thread"
    )
    /// nginx's `flush=`.
    static let logAccessFlush = Setting(
        "log.access.flush.ms",
        .integer(1...60_000),
        default: "250",
        "buffered access lines are written at least this often, and at shutdown"
    )
}
