import Foundation
import Logging

/// Writes each log record as one JSON object per line on standard error: `ts`, `level`, `label`, `msg`, the
/// metadata's keys, and `source`. For log collectors; `--log-format text` keeps swift-log's text lines.
///
/// A value; writes go through `FileHandle`, whose single `write` per line keeps lines whole across threads.
struct JSONLogHandler: LogHandler {
    let label: String
    var logLevel: Logger.Level
    var metadata: Logger.Metadata = [:]

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        var record: [String: Any] = [
            "ts": ISO8601DateFormatter.string(
                from: Date(),
                timeZone: .gmt,
                formatOptions: [.withInternetDateTime, .withFractionalSeconds]
            ),
            "level": event.level.rawValue,
            "label": label,
            "msg": "\(event.message)",
            "source": event.source,
        ]
        for (key, value) in metadata.merging(event.metadata ?? [:], uniquingKeysWith: { $1 }) {
            record[key] = "\(value)"
        }
        guard
            var line = try? JSONSerialization.data(
                withJSONObject: record,
                options: [.sortedKeys, .withoutEscapingSlashes]
            )
        else { return }
        line.append(UInt8(ascii: "\n"))
        FileHandle.standardError.write(line)
    }
}
