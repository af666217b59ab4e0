/// Who produced a journaled event.
public enum EventOrigin: Int, Sendable, Equatable {
    /// Posted by a client through the API.
    case client = 0
    /// Emitted by one of the session's feedbacks (an effect's result).
    case effect = 1
}

/// What the journal keeps about a session's creation.
public struct SessionCreation: Sendable, Equatable {
    /// The session's id as the API shows it.
    public var id: String
    /// The name of the hosted system.
    public var system: String
    /// The epoch of the session's cursors.
    public var epoch: UInt64
    /// The initial state as JSON text (revision 0).
    public var state: String
    /// Creation time, seconds since 1970.
    public var createdAt: Double

    /// Creates a creation record.
    public init(id: String, system: String, epoch: UInt64, state: String, createdAt: Double) {
        self.id = id
        self.system = system
        self.epoch = epoch
        self.state = state
        self.createdAt = createdAt
    }
}

/// One thing to write to the journal. Records of one `append` are committed together, in order.
public enum JournalRecord: Sendable, Equatable {
    /// A session was created; replaces whatever the journal held under the same id.
    case created(SessionCreation)
    /// The event that produced `revision` (the first event produces revision 1), as JSON text.
    case event(sessionID: String, revision: UInt64, event: String, origin: EventOrigin)
    /// The state at `revision` as JSON text; events up to `revision` are no longer needed and are deleted.
    case snapshot(sessionID: String, revision: UInt64, state: String)
    /// The session was deleted or expired: everything about it goes, its keyed answers too.
    case removed(sessionID: String)
    /// The answer to a request with an idempotency key; append it with the request's events, in one `append`,
    /// so both are durable or neither. The journal keeps the last `JournalConfiguration.answersPerSession`.
    case answered(KeyedAnswer)
    /// The session's next durable-timer deadline (milliseconds since 1970), or nil for none: what wakes a passive
    /// session when its timer is due.
    case deadline(sessionID: String, at: Int64?)
    /// The session left memory with its snapshot at `revision` and nothing after it (a passivation): reading it
    /// back then needs no scan of the log. Nil clears the mark (the session is active again and will append).
    case settled(sessionID: String, revision: UInt64?)
}
