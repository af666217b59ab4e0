/// The wire bytes of the session stream's events, framed once and shared by every subscriber that gets them.
///
/// Pure functions. JSON is written compact, so it holds no CR or LF and fits one `data:` line; `dataLines` still
/// splits at any line break, so no payload can ever end a field and start a forged one.
enum StreamFrame {
    /// Why a stream ended, sent as `event: ended` with `{"reason":…}`.
    enum EndReason: String, Sendable {
        case deleted
        case expired
    }

    /// The first bytes of every stream: a comment (so proxies and `onopen` do not wait) and the reconnection time.
    static func prelude(comment: String, retryMilliseconds: Int) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(48)
        out.append(contentsOf: ": ".utf8)
        out.append(contentsOf: comment.utf8.filter { $0 != cr && $0 != lf })
        out.append(lf)
        out.append(contentsOf: "retry: \(max(0, retryMilliseconds))\n\n".utf8)
        return out
    }

    /// A comment heartbeat.
    static let heartbeat: [UInt8] = Array(":\n\n".utf8)

    /// `event: snapshot` with `{"rev":R,"<member>":<json>}`; `member` is `state` or `select`.
    static func snapshot(cursor: Cursor, member: String, json: [UInt8]) -> [UInt8] {
        var data: [UInt8] = []
        data.reserveCapacity(json.count + 40)
        data.append(contentsOf: #"{"rev":\#(cursor.rev),"\#(member)":"#.utf8)
        data.append(contentsOf: json)
        data.append(UInt8(ascii: "}"))
        return event("snapshot", id: cursor, data: data)
    }

    /// `event: patch` with `{"base":B,"rev":R,"ops":[…]}`.
    static func patch(cursor: Cursor, base: UInt64, ops: [UInt8]) -> [UInt8] {
        var data: [UInt8] = []
        data.reserveCapacity(ops.count + 48)
        data.append(contentsOf: #"{"base":\#(base),"rev":\#(cursor.rev),"ops":"#.utf8)
        data.append(contentsOf: ops)
        data.append(UInt8(ascii: "}"))
        return event("patch", id: cursor, data: data)
    }

    /// `event: ended` with `{"reason":…}`; no id, so a client's `Last-Event-ID` stays the last state's.
    static func ended(_ reason: EndReason) -> [UInt8] {
        event("ended", id: nil, data: Array(#"{"reason":"\#(reason.rawValue)"}"#.utf8))
    }

    static func event(_ name: String, id: Cursor?, data: [UInt8]) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(data.count + 64)
        out.append(contentsOf: "event: \(name)\n".utf8)
        if let id { out.append(contentsOf: "id: \(id)\n".utf8) }
        appendDataLines(data, to: &out)
        out.append(lf)
        return out
    }

    /// `data: ` lines for `data`, one per line of it (split at CR, LF and CRLF).
    static func appendDataLines(_ data: [UInt8], to out: inout [UInt8]) {
        var start = 0
        var index = 0
        while index < data.count {
            let byte = data[index]
            if byte == cr || byte == lf {
                out.append(contentsOf: "data: ".utf8)
                out.append(contentsOf: data[start..<index])
                out.append(lf)
                if byte == cr, index + 1 < data.count, data[index + 1] == lf { index += 1 }
                start = index + 1
            }
            index += 1
        }
        out.append(contentsOf: "data: ".utf8)
        out.append(contentsOf: data[start..<data.count])
        out.append(lf)
    }

    private static let cr = UInt8(ascii: "\r")
    private static let lf = UInt8(ascii: "\n")
}
