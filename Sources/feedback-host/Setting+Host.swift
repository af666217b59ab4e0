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

    /// Every setting `feedback-host` takes: the service's (`log.format` and the access log's among them), the log
    /// level, and the built-in systems'.
    static let all: [Setting] = Setting.service + [logLevel] + PagingConfiguration.settings
}
