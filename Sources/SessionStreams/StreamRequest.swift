import FeedbackJSON
package import HTTPServer
package import SessionRuntime

/// What a client asked of `GET /v1/sessions/{id}/stream`: the mode, the selected parts and where to resume.
///
/// A value parsed on the shard queue from the request; `Sendable`, no shared state.
package struct StreamRequest: Sendable {
    /// How new states travel.
    package enum Mode: Sendable {
        /// A whole `snapshot` for each new state.
        case snapshot
        /// A `patch` from the state the client has.
        case patch
    }

    var mode: Mode
    /// The selected parts, sorted and without duplicates; empty means the whole state.
    var select: [JSONPointer]
    /// `Last-Event-ID`, else `?lastEventId=`; nil when neither was sent.
    var lastEventID: String?
    /// When the token the stream was opened with expires (seconds since 1970): the stream then gets `reauth` and
    /// closes. Nil without auth.
    package var tokenExpiry: Double?

    /// Reads the query and headers. A bad `mode` or `select` is the client's mistake (400); a bad cursor is not
    /// (it gets a snapshot), since an error status would stop a browser's EventSource for good.
    package init(_ request: Request) throws(APIError) {
        switch request.queryParameter("mode") {
        case nil, "snapshot": mode = .snapshot
        case "patch": mode = .patch
        case let other?:
            throw APIError(.invalidRequest, "mode is \"snapshot\" (the default) or \"patch\"; got \"\(other)\"")
        }
        var pointers = Set<JSONPointer>()
        for text in request.queryParameters("select") {
            do {
                pointers.insert(try JSONPointer(text))
            } catch {
                throw APIError(.invalidRequest, "select=\(text) is not a JSON Pointer: \(error.message)")
            }
        }
        select = pointers.sorted { $0.description < $1.description }
        lastEventID = request.headers["last-event-id"] ?? request.queryParameter("lastEventId")
    }
}

/// How a stream starts for a client that names the last state it saw.
package enum ResumeOutcome: String, Sendable, CaseIterable {
    /// The client is up to date: nothing is sent.
    case current
    /// The client is behind and one patch brings it up to date.
    case patch
    /// The client is behind and gets a snapshot.
    case snapshot
    /// The cursor is garbage, from another history or from the future: a snapshot.
    case unknown

    /// Decides, given the view's latest revision and whether a patch from the client's revision can be made.
    package static func decide(
        lastEventID: String,
        epoch: UInt64,
        latest: UInt64,
        mode: StreamRequest.Mode,
        canPatch: (UInt64) -> Bool
    ) -> (outcome: ResumeOutcome, base: UInt64?) {
        guard let cursor = Cursor(lastEventID), cursor.epoch == epoch, cursor.rev <= latest else {
            return (.unknown, nil)
        }
        if cursor.rev == latest { return (.current, cursor.rev) }
        if mode == .patch, canPatch(cursor.rev) { return (.patch, cursor.rev) }
        return (.snapshot, nil)
    }
}
