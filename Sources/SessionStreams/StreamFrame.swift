import FeedbackJSON
import HTTPServer
package import SessionRuntime

/// The wire bytes of the session stream's events, framed once and shared by every subscriber that gets them.
///
/// Pure functions. JSON is written compact, so it holds no CR or LF and fits one `data:` line; the framer
/// (`ServerSentEvent.append`) still splits at any line break, so no payload can ever end a field and start a
/// forged one.
package enum StreamFrame {
    /// Why a stream ended, sent as `event: ended` with `{"reason":…}`: why its session ended.
    package typealias EndReason = SessionEnd

    /// The first bytes of every stream, one block: a comment (so proxies and `onopen` do not wait) and the
    /// reconnection time.
    package static func prelude(comment: String, retryMilliseconds: Int) -> [UInt8] {
        // The comment's own blank line dropped: the retry line ends the block.
        ServerSentEvent.comment(comment).dropLast() + ServerSentEvent.retry(milliseconds: max(0, retryMilliseconds))
    }

    /// A comment heartbeat.
    static let heartbeat: [UInt8] = Array(":\n\n".utf8)

    /// `event: snapshot` with `{"rev":R,"<member>":<json>}`; `member` is `state` or `select`.
    static func snapshot(
        cursor: Cursor,
        member: String,
        json: [UInt8],
        clients: [UInt8]? = nil,
        schema: String? = nil
    ) -> [UInt8] {
        var data: [UInt8] = []
        data.reserveCapacity(json.count + 40 + (clients?.count ?? 0))
        data.append(contentsOf: #"{"rev":\#(cursor.rev),"\#(member)":"#.utf8)
        data.append(contentsOf: json)
        appendClients(clients, to: &data)
        if let schema {
            data.append(contentsOf: #","schema":"#.utf8)
            JSONString.escape(schema, into: &data)
        }
        data.append(UInt8(ascii: "}"))
        return event("snapshot", id: cursor, data: data)
    }

    /// `event: patch` with `{"base":B,"rev":R,"ops":[…]}`.
    static func patch(cursor: Cursor, base: UInt64, ops: [UInt8], clients: [UInt8]? = nil) -> [UInt8] {
        var data: [UInt8] = []
        data.reserveCapacity(ops.count + 48 + (clients?.count ?? 0))
        data.append(contentsOf: #"{"base":\#(base),"rev":\#(cursor.rev),"ops":"#.utf8)
        data.append(contentsOf: ops)
        appendClients(clients, to: &data)
        data.append(UInt8(ascii: "}"))
        return event("patch", id: cursor, data: data)
    }

    /// The last event of a stream whose session ended here: `event: ended` with `{"reason":…}` for good (deleted,
    /// expired), or `event: moved` when it left this replica. No id, so a client's `Last-Event-ID` stays the last
    /// state's.
    /// `,"clients":{…}`: the last numbered post of each client the frame's revision includes. It depends on the
    /// revision alone, so the frame stays one for every subscriber of the view.
    private static func appendClients(_ clients: [UInt8]?, to data: inout [UInt8]) {
        guard let clients else { return }
        data.append(contentsOf: #","clients":"#.utf8)
        data.append(contentsOf: clients)
    }

    package static func ended(_ reason: EndReason) -> [UInt8] {
        switch reason {
        case .deleted, .expired: event("ended", id: nil, data: Array(#"{"reason":"\#(reason.rawValue)"}"#.utf8))
        case .moved: moved
        }
    }

    /// The reconnection time `event: moved` sets: short, since the session is served elsewhere now (the stream's own
    /// `retry:` is for a replica that is gone or full). The next stream's prelude sets the usual one again.
    static let movedRetryMilliseconds = 100

    /// `event: moved` with `{"reason":"moved"}` and a short `retry:`: the session left this replica; reconnect at once
    /// with the `Last-Event-ID` (the balancer sends the stream to the session's owner, which resumes it by the cursor
    /// with a patch or a snapshot). No id, like `ended`.
    static let moved: [UInt8] = {
        var out: [UInt8] = []
        ServerSentEvent.append(
            event: "moved".utf8,
            id: [UInt8]?.none,
            retry: movedRetryMilliseconds,
            data: Array(#"{"reason":"moved"}"#.utf8),
            to: &out
        )
        return out
    }()

    /// `event: reauth`: the stream's token expired and the stream closes; reconnect with a new token (the
    /// `Last-Event-ID` resumes as usual). No id, like `ended`.
    static let reauth: [UInt8] = event("reauth", id: nil, data: Array(#"{"reason":"token-expired"}"#.utf8))

    /// Frames one event through HTTPServer's framer (the product's one), with the cursor as its id.
    package static func event(_ name: String, id: Cursor?, data: [UInt8]) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(data.count + 64)
        ServerSentEvent.append(event: name.utf8, id: id.map { "\($0)".utf8 }, data: data, to: &out)
        return out
    }
}
