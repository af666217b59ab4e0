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
        Self.append(event: event?.utf8, id: id?.utf8, retry: retry, data: data.utf8, to: &buffer)
    }

    /// The framer itself, over bytes: appends one event to `out`, with the rules of the type's doc: `event:` and
    /// `id:` lines (each without CR, LF and NUL) when given, `retry:` when zero or positive, one `data:` line per
    /// line of `data`, and the blank line. Builds no `String`; pass constant names and reused buffers on a hot path
    /// (one framing shared by every subscriber).
    @inlinable
    public static func append<Name: Collection<UInt8>, ID: Collection<UInt8>, Data: Collection<UInt8>>(
        event: Name?,
        id: ID?,
        retry: Int? = nil,
        data: Data,
        to out: inout [UInt8]
    ) {
        if let event { appendField(eventPrefix, singleLine: event, to: &out) }
        if let id { appendField(idPrefix, singleLine: id, to: &out) }
        if let retry, retry >= 0 {
            out.append(contentsOf: retryPrefix)
            out.append(contentsOf: String(retry).utf8)
            out.append(lf)
        }
        forEachLine(of: data) { line in
            out.append(contentsOf: dataPrefix)
            out.append(contentsOf: line)
            out.append(lf)
        }
        out.append(lf)
    }

    /// `append` for an event without a name or an id.
    @inlinable
    public static func append<Data: Collection<UInt8>>(data: Data, to out: inout [UInt8]) {
        append(event: [UInt8]?.none, id: [UInt8]?.none, data: data, to: &out)
    }

    /// A comment block: one `: text` line per line of `text` (split at CR, LF and CRLF, so the text
    /// can never start a field), then a blank line. Clients ignore it; use it as a heartbeat that
    /// keeps proxies and idle timers from closing the stream. Send it only between events.
    public static func comment(_ text: String) -> [UInt8] {
        var buffer: [UInt8] = []
        buffer.reserveCapacity(text.utf8.count + 4)
        forEachLine(of: text.utf8) { line in
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

    /// A block that only sets the client's reconnection time (`retry: N` and a blank line; no event is dispatched).
    /// A negative value gives no bytes.
    public static func retry(milliseconds: Int) -> [UInt8] {
        guard milliseconds >= 0 else { return [] }
        return retryPrefix + Array(String(milliseconds).utf8) + [lf, lf]
    }

    @usableFromInline static let lf = UInt8(ascii: "\n")
    @usableFromInline static let cr = UInt8(ascii: "\r")
    @usableFromInline static let colon = UInt8(ascii: ":")
    @usableFromInline static let space = UInt8(ascii: " ")
    @usableFromInline static let eventPrefix: [UInt8] = Array("event: ".utf8)
    @usableFromInline static let idPrefix: [UInt8] = Array("id: ".utf8)
    @usableFromInline static let retryPrefix: [UInt8] = Array("retry: ".utf8)
    @usableFromInline static let dataPrefix: [UInt8] = Array("data: ".utf8)

    @inlinable
    static func appendField(_ prefix: [UInt8], singleLine value: some Collection<UInt8>, to buffer: inout [UInt8]) {
        buffer.append(contentsOf: prefix)
        for byte in value where byte != cr && byte != lf && byte != 0 {
            buffer.append(byte)
        }
        buffer.append(lf)
    }

    /// Calls `body` with the bytes of each line of `text`, split at CRLF, CR and LF; an empty text is one empty
    /// line, and a trailing line break gives a trailing empty line.
    @inlinable
    static func forEachLine<Text: Collection<UInt8>>(of text: Text, _ body: (Text.SubSequence) -> Void) {
        var start = text.startIndex
        var index = start
        while index != text.endIndex {
            let byte = text[index]
            if byte == cr || byte == lf {
                body(text[start..<index])
                let next = text.index(after: index)
                if byte == cr, next != text.endIndex, text[next] == lf {
                    index = next
                }
                start = text.index(after: index)
            }
            index = text.index(after: index)
        }
        body(text[start..<text.endIndex])
    }
}
