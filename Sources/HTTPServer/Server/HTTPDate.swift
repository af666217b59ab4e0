import Glibc

/// The `Date: ...\r\n` header line (RFC 9110 IMF-fixdate), rebuilt at most once per second.
///
/// A value owned by one shard and refreshed on its queue.
struct HTTPDate {
    private(set) var line: [UInt8] = []
    private var second: time_t = -1

    init() { refresh() }

    mutating func refresh() {
        var t = time(nil)
        guard t != second else { return }
        second = t
        var parts = tm()
        gmtime_r(&t, &parts)
        let days = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
        let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
        func two(_ v: Int32) -> String { v < 10 ? "0\(v)" : "\(v)" }
        let text =
            "Date: \(days[Int(parts.tm_wday)]), \(two(parts.tm_mday)) \(months[Int(parts.tm_mon)]) "
            + "\(parts.tm_year + 1900) \(two(parts.tm_hour)):\(two(parts.tm_min)):\(two(parts.tm_sec)) GMT\r\n"
        line = Array(text.utf8)
    }
}
