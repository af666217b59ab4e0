/// One server-sent event, framed for a `text/event-stream` body as the WHATWG HTML standard
/// ("Server-sent events", "Interpreting an event stream") parses it.
///
/// Framing rules, chosen so that a conforming client (a browser's `EventSource`) reconstructs
/// exactly the values given here:
/// - `data` is split at every CR, LF and CRLF; each piece becomes one `data:` line. The client joins
///   the lines with LF, so a CR or CRLF inside `data` arrives as LF (the standard has no way to
///   carry a CR). An empty `data` becomes one empty `data:` line, which a client dispatches as an
///   event whose data is the empty string.
/// - every value is written after `": "`: the client removes exactly one space after the colon, so
///   a value that starts with a space keeps it.
/// - `id` and `event` are written on one line each, with every CR, LF and NUL removed (not
///   replaced): a line break there would end the field and start a forged one, and the standard makes
///   a client ignore an `id` that contains NUL. An empty `event` is dispatched as `message`.
/// - `retry` is written only when it is zero or positive (the standard accepts ASCII digits only);
///   a negative value is left out.
/// - a blank line ends the event.
///
/// Lines end with LF alone. A value type: `Sendable`, no shared state.
public struct ServerSentEvent: Sendable, Equatable {
    /// The event id (`id:`); a client sends the last one back as `Last-Event-ID` when it reconnects.
    public var id: String?
    /// The event type (`event:`); a client dispatches an event without one as `message`.
    public var event: String?
    /// The payload; may contain line breaks (see the type's doc for how they travel).
    public var data: String
    /// The reconnection time the client should use, in milliseconds (`retry:`).
    public var retry: Int?

    /// Creates an event; only `data` is required.
    public init(id: String? = nil, event: String? = nil, data: String, retry: Int? = nil) {
        self.id = id
        self.event = event
        self.data = data
        self.retry = retry
    }

    /// The event's wire bytes, blank line included.
    public var encoded: [UInt8] {
        var buffer: [UInt8] = []
        buffer.reserveCapacity(data.utf8.count + 32)
        encode(into: &buffer)
        return buffer
    }

    /// Appends the event's wire bytes, blank line included, to `buffer`.
    public func encode(into buffer: inout [UInt8]) {
        if let event {
            Self.appendField("event", singleLine: event, to: &buffer)
        }
        if let id {
            Self.appendField("id", singleLine: id, to: &buffer)
        }
        if let retry, retry >= 0 {
            buffer.append(contentsOf: "retry: ".utf8)
            buffer.append(contentsOf: String(retry).utf8)
            buffer.append(Self.lf)
        }
        Self.forEachLine(of: data) { line in
            buffer.append(contentsOf: "data: ".utf8)
            buffer.append(contentsOf: line)
            buffer.append(Self.lf)
        }
        buffer.append(Self.lf)
    }

    /// A comment block: one `: text` line per line of `text` (split at CR, LF and CRLF, so the text
    /// can never start a field), then a blank line. Clients ignore it; use it as a heartbeat that
    /// keeps proxies and idle timers from closing the stream. Send it only between events.
    public static func comment(_ text: String) -> [UInt8] {
        var buffer: [UInt8] = []
        buffer.reserveCapacity(text.utf8.count + 4)
        forEachLine(of: text) { line in
            buffer.append(colon)
            if !line.isEmpty {
                buffer.append(space)
                buffer.append(contentsOf: line)
            }
            buffer.append(lf)
        }
        buffer.append(lf)
        return buffer
    }

    private static let lf = UInt8(ascii: "\n")
    private static let cr = UInt8(ascii: "\r")
    private static let colon = UInt8(ascii: ":")
    private static let space = UInt8(ascii: " ")

    private static func appendField(_ name: String, singleLine value: String, to buffer: inout [UInt8]) {
        buffer.append(contentsOf: name.utf8)
        buffer.append(colon)
        buffer.append(space)
        for byte in value.utf8 where byte != cr && byte != lf && byte != 0 {
            buffer.append(byte)
        }
        buffer.append(lf)
    }

    /// Calls `body` with the UTF-8 bytes of each line of `text`, split at CRLF, CR and LF; an empty
    /// text is one empty line, and a trailing line break gives a trailing empty line.
    private static func forEachLine(of text: String, _ body: (ArraySlice<UInt8>) -> Void) {
        let bytes = Array(text.utf8)
        var start = 0
        var index = 0
        while index < bytes.count {
            let byte = bytes[index]
            if byte == cr || byte == lf {
                body(bytes[start..<index])
                if byte == cr, index + 1 < bytes.count, bytes[index + 1] == lf {
                    index += 1
                }
                start = index + 1
            }
            index += 1
        }
        body(bytes[start..<bytes.count])
    }
}
