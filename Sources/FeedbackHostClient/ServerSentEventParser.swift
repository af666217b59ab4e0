/// One server-sent event: its `event:` name (`message` when none), `id:` and `data:` lines joined by newlines.
public struct ServerSentEvent: Sendable, Equatable {
    /// The event's type.
    public var type: String
    /// The last `id:` seen, if the event had one.
    public var id: String?
    /// The data lines, joined with `\n`.
    public var data: String
}

/// The `text/event-stream` grammar (WHATWG HTML, "Parsing an event stream") over bytes as they arrive: feed it any
/// pieces, it returns the events the pieces completed. A value, no I/O; the stream reader owns one per connection.
struct ServerSentEventParser {
    private var line: [UInt8] = []
    private var type = ""
    private var data: [String] = []
    private var id: String?
    private var sawCarriageReturn = false
    /// The last `retry:` the server sent, in milliseconds.
    private(set) var retryMilliseconds: Int?

    mutating func feed(_ bytes: some Sequence<UInt8>) -> [ServerSentEvent] {
        var events: [ServerSentEvent] = []
        for byte in bytes {
            if sawCarriageReturn {
                sawCarriageReturn = false
                if byte == UInt8(ascii: "\n") { continue }
            }
            switch byte {
            case UInt8(ascii: "\r"):
                sawCarriageReturn = true
                if let event = endLine() { events.append(event) }
            case UInt8(ascii: "\n"):
                if let event = endLine() { events.append(event) }
            default:
                line.append(byte)
            }
        }
        return events
    }

    private mutating func endLine() -> ServerSentEvent? {
        defer { line.removeAll(keepingCapacity: true) }
        guard !line.isEmpty else {
            defer {
                type = ""
                data = []
            }
            guard !data.isEmpty else { return nil }
            return ServerSentEvent(type: type.isEmpty ? "message" : type, id: id, data: data.joined(separator: "\n"))
        }
        if line.first == UInt8(ascii: ":") { return nil }
        let colon = line.firstIndex(of: UInt8(ascii: ":")) ?? line.endIndex
        let field = String(decoding: line[..<colon], as: UTF8.self)
        var valueStart = colon < line.endIndex ? line.index(after: colon) : colon
        if valueStart < line.endIndex, line[valueStart] == UInt8(ascii: " ") {
            valueStart = line.index(after: valueStart)
        }
        let value = String(decoding: line[valueStart...], as: UTF8.self)
        switch field {
        case "event": type = value
        case "data": data.append(value)
        case "id": if !value.contains("\u{0}") { id = value }
        case "retry": if let milliseconds = Int(value) { retryMilliseconds = milliseconds }
        default: break
        }
        return nil
    }
}
