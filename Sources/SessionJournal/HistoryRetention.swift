import Foundation

/// How much of a session's history the journal keeps for inspection, `verify` and export: the kept snapshots and the
/// events after the oldest of them. Compaction deletes only what falls outside it (and what recovery no longer needs).
///
/// Written `forever`, `events:N` (at least the last N events), `age:D` (at least the events of the last D, with D a
/// number and `ms`, `s`, `m`, `h` or `d`) or `snapshots:N` (the newest N kept snapshots, the creation's state counting
/// as one; `journal.history.snapshots` is this). The kept part starts at a kept snapshot, so a little more than asked
/// is kept: up to one snapshot interval of events more.
public enum HistoryRetention: Sendable, Equatable, CustomStringConvertible {
    /// Every event and every snapshot since the session's creation.
    case forever
    /// At least the last `count` events.
    case events(Int)
    /// At least the events of the last `milliseconds`.
    case age(milliseconds: Int64)
    /// The newest `count` snapshots (0: only the latest, which recovery needs, and the events after it).
    case snapshots(Int)

    /// Parses the written form; nil when it is not one.
    public init?(parsing text: String) {
        let text = text.trimmingCharacters(in: .whitespaces).lowercased()
        if text == "forever" {
            self = .forever
            return
        }
        guard let colon = text.firstIndex(of: ":") else { return nil }
        let kind = text[..<colon]
        let value = String(text[text.index(after: colon)...])
        switch kind {
        case "events":
            guard let count = Int(value), count > 0 else { return nil }
            self = .events(count)
        case "snapshots":
            guard let count = Int(value), count >= 0 else { return nil }
            self = .snapshots(count)
        case "age":
            guard let milliseconds = Self.milliseconds(value), milliseconds > 0 else { return nil }
            self = .age(milliseconds: milliseconds)
        default:
            return nil
        }
    }

    /// The written form.
    public var description: String {
        switch self {
        case .forever: "forever"
        case .events(let count): "events:\(count)"
        case .age(let milliseconds): "age:\(milliseconds)ms"
        case .snapshots(let count): "snapshots:\(count)"
        }
    }

    /// Whether snapshots are kept in the journal's history at all (`snapshots:0` keeps only the latest).
    package var keepsSnapshots: Bool { self != .snapshots(0) }

    private static func milliseconds(_ text: String) -> Int64? {
        let units: [(String, Int64)] = [("ms", 1), ("s", 1000), ("m", 60_000), ("h", 3_600_000), ("d", 86_400_000)]
        for (suffix, factor) in units where text.hasSuffix(suffix) {
            guard let number = Int64(text.dropLast(suffix.count)), number > 0 else { return nil }
            let (product, overflow) = number.multipliedReportingOverflow(by: factor)
            return overflow ? nil : product
        }
        return nil
    }
}
