/// The last post a client numbered for a session (issue 34, exact reconciliation): the client's id, the sequence
/// number of its latest post and the answer it got, journaled in the same `append` as that post's events (one
/// row per session and client, replaced by each post), so that a retry after a restart, a passivation or a takeover
/// is answered again instead of applied twice, and a gap is noticed.
public struct ClientSequence: Sendable, Equatable {
    /// The session's id.
    public var sessionID: String
    /// The client's id (1 to 64 characters of `A-Za-z0-9_-`, as the API checks).
    public var client: String
    /// The sequence number of the client's latest post (1, 2, ...).
    public var sequence: UInt64
    /// The epoch of the answer's cursor.
    public var epoch: UInt64
    /// The session's revision after the post (a refused post: the revision it was refused at).
    public var revision: UInt64
    /// The answer's HTTP status: 200 for an applied post, the 4xx of a permanent refusal.
    public var status: Int
    /// The answer's body as JSON text (the snapshot, or the refusal's problem).
    public var answer: String

    /// Creates a client's sequence record.
    public init(
        sessionID: String,
        client: String,
        sequence: UInt64,
        epoch: UInt64,
        revision: UInt64,
        status: Int,
        answer: String
    ) {
        self.sessionID = sessionID
        self.client = client
        self.sequence = sequence
        self.epoch = epoch
        self.revision = revision
        self.status = status
        self.answer = answer
    }
}

extension RecordChecksum {
    /// The sum of a client's sequence row.
    package static func sequence(_ record: ClientSequence) -> Int64 {
        of(
            record.sessionID,
            record.sequence,
            record.client,
            String(record.epoch),
            String(record.revision),
            String(record.status),
            record.answer
        )
    }
}
