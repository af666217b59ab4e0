import FeedbackJSON
import Glibc

/// Writes access lines as bytes: a time stamp whose seconds part is formatted once per second (the clock is read
/// through the vDSO, and no time zone is consulted: time stamps are UTC), then the request's fields in the text or
/// JSON format. No `String` is made per line.
///
/// A value; `AccessLog` keeps one behind its lock.
struct AccessLogFormatter {
    /// What one line says about one answered request.
    struct Entry {
        /// The request's method; nil when the request could not be decoded.
        var method: HTTPMethod?
        /// The request's path as the server saw it (never logged as is: see `Router.appendRoute`); nil when the
        /// request could not be decoded.
        var path: String?
        /// The route the request was handed to, when it was: its pattern is written as it is, without looking the
        /// path up again.
        var route: Router.Route? = nil
        var status: Int
        /// Body bytes sent; nil for a streaming response, whose size is not known when it starts.
        var bytes: Int?
        /// From the head's arrival to the answer, in microseconds.
        var durationMicroseconds: UInt64
        var connection: UInt64
    }

    let format: AccessLog.Format
    let level: [UInt8]
    private var second = -1
    /// `2026-11-26T06:23:17` for `second`.
    private var secondText: [UInt8] = []

    init(format: AccessLog.Format, level: String) {
        self.format = format
        self.level = Array(level.utf8)
    }

    /// Appends one line, newline included, for `entry` at the wall-clock time `now` (`CLOCK_REALTIME`).
    mutating func append(_ entry: Entry, at now: timespec, router: Router, to out: inout [UInt8]) {
        switch format {
        case .text:
            if let route = entry.route, appendText(entry, route: route, at: now, to: &out) { return }
            appendTime(now, to: &out)
            out.append(UInt8(ascii: " "))
            out.append(contentsOf: level)
            out.append(contentsOf: " http.access: method=".utf8)
            appendMethod(entry.method, to: &out)
            out.append(contentsOf: " route=".utf8)
            appendRoute(entry, router: router, to: &out)
            out.append(contentsOf: " status=".utf8)
            DecimalText.append(UInt64(max(0, entry.status)), to: &out)
            out.append(contentsOf: " bytes=".utf8)
            if let bytes = entry.bytes { DecimalText.append(UInt64(max(0, bytes)), to: &out) } else { out.append(45) }
            out.append(contentsOf: " duration_us=".utf8)
            DecimalText.append(entry.durationMicroseconds, to: &out)
            out.append(contentsOf: " connection.id=".utf8)
            DecimalText.append(entry.connection, to: &out)
        case .json:
            out.append(contentsOf: "{\"ts\":\"".utf8)
            appendTime(now, to: &out)
            out.append(contentsOf: "\",\"level\":\"".utf8)
            out.append(contentsOf: level)
            out.append(contentsOf: "\",\"label\":\"http.access\",\"msg\":\"".utf8)
            appendMethod(entry.method, to: &out)
            out.append(UInt8(ascii: " "))
            appendRoute(entry, router: router, to: &out)
            out.append(UInt8(ascii: " "))
            DecimalText.append(UInt64(max(0, entry.status)), to: &out)
            out.append(contentsOf: "\",\"method\":\"".utf8)
            appendMethod(entry.method, to: &out)
            out.append(contentsOf: "\",\"route\":\"".utf8)
            appendRoute(entry, router: router, to: &out)
            out.append(contentsOf: "\",\"status\":".utf8)
            DecimalText.append(UInt64(max(0, entry.status)), to: &out)
            out.append(contentsOf: ",\"bytes\":".utf8)
            if let bytes = entry.bytes {
                DecimalText.append(UInt64(max(0, bytes)), to: &out)
            } else {
                out.append(contentsOf: "null".utf8)
            }
            out.append(contentsOf: ",\"duration_us\":".utf8)
            DecimalText.append(entry.durationMicroseconds, to: &out)
            out.append(contentsOf: ",\"connection.id\":".utf8)
            DecimalText.append(entry.connection, to: &out)
            out.append(UInt8(ascii: "}"))
        }
        out.append(UInt8(ascii: "\n"))
    }

    /// The text line of a request a route took, written on the stack and appended in one copy (a line holds about
    /// twenty pieces, each a capacity check of `out` when appended one by one); false, with nothing written, when
    /// the route's pattern is too long for the room.
    private mutating func appendText(
        _ entry: Entry,
        route: Router.Route,
        at now: timespec,
        to out: inout [UInt8]
    ) -> Bool {
        // The fixed parts, the numbers at their longest and the method take under 200 bytes.
        let room = 512
        let method = entry.method?.rawValue.utf8.count ?? 1
        guard route.pattern.count + level.count + method <= room - 200 else { return false }
        if Int(now.tv_sec) != second { refreshSecond(Int(now.tv_sec)) }
        return withUnsafeTemporaryAllocation(of: UInt8.self, capacity: room) { room in
            var line = LineCursor(base: room.baseAddress!)
            secondText.withUnsafeBufferPointer { line.put($0) }
            line.put(UInt8(ascii: "."))
            let milliseconds = Int(now.tv_nsec) / 1_000_000
            line.put(UInt8(ascii: "0") &+ UInt8(milliseconds / 100))
            line.put(UInt8(ascii: "0") &+ UInt8(milliseconds / 10 % 10))
            line.put(UInt8(ascii: "0") &+ UInt8(milliseconds % 10))
            line.put(UInt8(ascii: "Z"))
            line.put(UInt8(ascii: " "))
            level.withUnsafeBufferPointer { line.put($0) }
            line.put(" http.access: method=")
            if let method = entry.method {
                var name = method.rawValue
                name.withUTF8 { line.put($0) }
            } else {
                line.put(UInt8(ascii: "-"))
            }
            line.put(" route=")
            route.pattern.withUnsafeBufferPointer { line.put($0) }
            line.put(" status=")
            line.put(decimal: UInt64(max(0, entry.status)))
            line.put(" bytes=")
            if let bytes = entry.bytes { line.put(decimal: UInt64(max(0, bytes))) } else { line.put(UInt8(ascii: "-")) }
            line.put(" duration_us=")
            line.put(decimal: entry.durationMicroseconds)
            line.put(" connection.id=")
            line.put(decimal: entry.connection)
            line.put(UInt8(ascii: "\n"))
            out.append(contentsOf: UnsafeBufferPointer(start: room.baseAddress, count: line.at))
            return true
        }
    }

    /// Where the next byte of a line goes, in room the caller made big enough.
    private struct LineCursor {
        let base: UnsafeMutablePointer<UInt8>
        var at = 0

        mutating func put(_ bytes: UnsafeBufferPointer<UInt8>) {
            guard let source = bytes.baseAddress else { return }
            (base + at).initialize(from: source, count: bytes.count)
            at += bytes.count
        }

        mutating func put(_ text: StaticString) {
            text.withUTF8Buffer { put($0) }
        }

        mutating func put(_ byte: UInt8) {
            base[at] = byte
            at += 1
        }

        mutating func put(decimal value: UInt64) {
            at += DecimalText.write(value, to: base + at)
        }
    }

    private func appendMethod(_ method: HTTPMethod?, to out: inout [UInt8]) {
        guard let method else { return out.append(UInt8(ascii: "-")) }
        out.append(contentsOf: method.rawValue.utf8)
    }

    private func appendRoute(_ entry: Entry, router: Router, to out: inout [UInt8]) {
        if let route = entry.route { return out.append(contentsOf: route.pattern) }
        guard let path = entry.path else { return out.append(UInt8(ascii: "-")) }
        router.appendRoute(of: path, to: &out)
    }

    /// `2026-11-26T06:23:17.123Z`; the part before the dot is rebuilt only when the second changes.
    mutating func appendTime(_ now: timespec, to out: inout [UInt8]) {
        let seconds = Int(now.tv_sec)
        if seconds != second { refreshSecond(seconds) }
        out.append(contentsOf: secondText)
        out.append(UInt8(ascii: "."))
        Self.appendPadded(Int(now.tv_nsec) / 1_000_000, width: 3, to: &out)
        out.append(UInt8(ascii: "Z"))
    }

    /// Formats `secondText` for the second `seconds` (UTC).
    private mutating func refreshSecond(_ seconds: Int) {
        second = seconds
        var t = time_t(seconds)
        var parts = tm()
        gmtime_r(&t, &parts)
        var text: [UInt8] = []
        text.reserveCapacity(19)
        Self.appendPadded(Int(parts.tm_year) + 1900, width: 4, to: &text)
        text.append(UInt8(ascii: "-"))
        Self.appendPadded(Int(parts.tm_mon) + 1, width: 2, to: &text)
        text.append(UInt8(ascii: "-"))
        Self.appendPadded(Int(parts.tm_mday), width: 2, to: &text)
        text.append(UInt8(ascii: "T"))
        Self.appendPadded(Int(parts.tm_hour), width: 2, to: &text)
        text.append(UInt8(ascii: ":"))
        Self.appendPadded(Int(parts.tm_min), width: 2, to: &text)
        text.append(UInt8(ascii: ":"))
        Self.appendPadded(Int(parts.tm_sec), width: 2, to: &text)
        secondText = text
    }

    static func appendPadded(_ value: Int, width: Int, to out: inout [UInt8]) {
        var divisor = 1
        for _ in 1..<width { divisor *= 10 }
        var rest = max(0, value)
        while divisor > 0 {
            out.append(UInt8(ascii: "0") + UInt8(truncatingIfNeeded: (rest / divisor) % 10))
            rest %= divisor
            divisor /= 10
        }
    }
}
