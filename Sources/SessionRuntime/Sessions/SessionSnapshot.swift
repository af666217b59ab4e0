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
        guard (id != nil && system != nil) || schema != nil else {
            // A post's answer: written in place into one allocation, with no check of room or uniqueness per part.
            return [UInt8](writing: membersCapacity + 2) { out in
                let base = out.baseAddress!
                base[0] = UInt8(ascii: "{")
                let written = 1 + writeMembers(at: base + 1)
                base[written] = UInt8(ascii: "}")
                return written + 1
            }
        }
        var out: [UInt8] = []
        out.reserveCapacity(membersCapacity + 96)
        out.append(UInt8(ascii: "{"))
        if let id, let system {
            out.append(contentsOf: #""id":""#.utf8)
            id.appendText(to: &out)  // base64url: nothing to escape
            out.append(contentsOf: #"","system":"#.utf8)
            JSONString.escape(system, into: &out)
            out.append(UInt8(ascii: ","))
        }
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: membersCapacity) { room in
            out.append(contentsOf: UnsafeBufferPointer(rebasing: room[..<writeMembers(at: room.baseAddress!)]))
        }
        if let schema {
            out.append(contentsOf: #","schema":"#.utf8)
            JSONString.escape(schema, into: &out)
        }
        out.append(UInt8(ascii: "}"))
        return out
    }

    /// Bytes enough for `writeMembers`: the state's and the clients' bytes, 39 literal bytes and 3 numbers of at most
    /// 20 digits.
    private var membersCapacity: Int { state.count + (clients?.count ?? 0) + 39 + 3 * 20 }

    /// Writes the members every body has, `"rev":…,"cursor":"…","state":…` and `"clients":…` when some client numbered
    /// its posts, at `start`, and returns how many bytes it wrote (at most `membersCapacity`).
    private func writeMembers(at start: UnsafeMutablePointer<UInt8>) -> Int {
        var at = start
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
        put(#""rev":"#)
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
        return at - start
    }
}
