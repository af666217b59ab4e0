import FeedbackJSON

/// A session's state at one revision, encoded once: what `GET /v1/sessions/{id}` answers and a POST returns.
public struct SessionSnapshot: Sendable, Equatable {
    /// The revision and epoch.
    public let cursor: Cursor
    /// The state as compact JSON.
    public let state: [UInt8]
    /// `{"client": last sequence, …}`: the numbered posts of each client this revision includes (issue 34); nil when
    /// no client numbered its posts.
    public let clients: [UInt8]?

    @usableFromInline
    package init(cursor: Cursor, state: [UInt8], clients: [UInt8]? = nil) {
        self.cursor = cursor
        self.state = state
        self.clients = clients
    }

    /// The same snapshot with `clients`.
    @usableFromInline
    package func with(clients: [UInt8]?) -> SessionSnapshot {
        SessionSnapshot(cursor: cursor, state: state, clients: clients)
    }

    /// The revision.
    public var rev: UInt64 { cursor.rev }

    /// `{"rev":…,"cursor":"…","state":…}`, optionally preceded by the session's id and system.
    public func body(id: SessionID? = nil, system: String? = nil, schema: String? = nil) -> [UInt8] {
        guard (id == nil || system == nil) && schema == nil else {
            return labelledBody(id: id, system: system, schema: schema)
        }
        // A post's answer: every part but the state's and the clients' bytes is a literal or a number, so the body is
        // written in place into one allocation, with no check of room or uniqueness per part.
        let capacity = state.count + (clients?.count ?? 0) + 41 + 3 * 20  // 41 literal bytes, 3 numbers of 20 digits
        return [UInt8](writing: capacity) { out in
            var at = out.baseAddress!
            func put(_ text: StaticString) {
                at.initialize(from: text.utf8Start, count: text.utf8CodeUnitCount)
                at += text.utf8CodeUnitCount
            }
            func put(_ bytes: [UInt8]) {
                bytes.withUnsafeBufferPointer {
                    if let base = $0.baseAddress { at.initialize(from: base, count: $0.count) }
                }
                at += bytes.count
            }
            put(#"{"rev":"#)
            at += DecimalText.write(cursor.rev, to: at)
            put(#","cursor":""#)
            at += DecimalText.write(cursor.epoch, to: at)
            put("-")
            at += DecimalText.write(cursor.rev, to: at)
            put(#"","state":"#)
            put(state)
            if let clients {
                put(#","clients":"#)
                put(clients)
            }
            put("}")
            return at - out.baseAddress!
        }
    }

    /// `body` with the session's id and system, or its schema's hash.
    private func labelledBody(id: SessionID?, system: String?, schema: String?) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(state.count + 96)
        out.append(UInt8(ascii: "{"))
        // Written byte by byte: an interpolated `String` here cost two allocations an answer.
        if let id, let system {
            out.append(contentsOf: #""id":""#.utf8)
            out.append(contentsOf: id.description.utf8)  // base64url: nothing to escape
            out.append(contentsOf: #"","system":"#.utf8)
            JSONString.escape(system, into: &out)
            out.append(UInt8(ascii: ","))
        }
        out.append(contentsOf: #""rev":"#.utf8)
        DecimalText.append(cursor.rev, to: &out)
        out.append(contentsOf: #","cursor":""#.utf8)
        DecimalText.append(cursor.epoch, to: &out)
        out.append(UInt8(ascii: "-"))
        DecimalText.append(cursor.rev, to: &out)
        out.append(contentsOf: #"","state":"#.utf8)
        out.append(contentsOf: state)
        if let clients {
            out.append(contentsOf: #","clients":"#.utf8)
            out.append(contentsOf: clients)
        }
        if let schema {
            out.append(contentsOf: #","schema":"#.utf8)
            JSONString.escape(schema, into: &out)
        }
        out.append(UInt8(ascii: "}"))
        return out
    }
}
