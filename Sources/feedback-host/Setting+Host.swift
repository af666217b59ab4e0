import FeedbackService
import Systems

extension Setting {
    /// How much the server logs.
    static let logLevel = Setting(
        "log.level",
        .choice(["trace", "debug", "info", "notice", "warning", "error", "critical"]),
        default: "info",
        "the lowest level logged"
    )
    /// How log lines look.
    static let logFormat = Setting(
        "log.format",
        .choice(["text", "json"]),
        default: "text",
        "text lines, or one JSON object per line (the container's default)"
    )

    /// Every setting `feedback-host` takes: the service's, logging, and the built-in systems'.
    static let all: [Setting] = Setting.service + [logLevel, logFormat] + PagingConfiguration.settings
}
