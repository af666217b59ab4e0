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
    /// The system's schema version `state` was written with.
    public var version: Int

    /// Creates a creation record.
    public init(id: String, system: String, epoch: UInt64, state: String, createdAt: Double, version: Int = 1) {
        self.version = version
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
    /// The event that produced `revision` (the first event produces revision 1), as JSON text, with its schema
    /// version, when it was recorded and the checksum of the state it produced.
    case event(sessionID: String, revision: UInt64, event: EventText, origin: EventOrigin, stamp: EventStamp = .init())
    /// The state at `revision` as JSON text of schema `version`; events up to `revision` are no longer needed for
    /// recovery (compaction deletes them unless the journal keeps them for verification).
    case snapshot(sessionID: String, revision: UInt64, state: String, version: Int = 1)
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
    /// The session's token generation (`--auth jwt`): the tokens the server minted for it carry the generation they
    /// were minted in, and a revocation moves it on, so only tokens of this generation are accepted. A creation or a
    /// removal of the id resets it to 0 (a re-anchored session journals its generation again after its creation).
    /// Written by the session's owner like any of its records (fenced where the journal is shared).
    case tokens(sessionID: String, generation: UInt64)
    /// A client's numbered post (`ClientSequence`): its last sequence and answer for the session, replacing the
    /// client's previous one. Append it with the post's events, in one `append`, so both are durable or neither.
    case sequenced(ClientSequence)
    /// The session forgot a client (it remembers the most recently active ones, `session.clients.max`): its
    /// `ClientSequence` row goes.
    case clientForgotten(sessionID: String, client: String)

    /// The session's effects are paused (true: a fork's, appended with its creation) or run again (false: resumed).
    /// A paused session's deadline stays in the index but wakes nothing, and it is read back paused
    /// (`RecoveredSession.effectsPaused`). A creation or a removal of the id ends the pause. Written by the session's
    /// owner like any of its records (fenced where the journal is shared).
    case paused(sessionID: String, Bool)
}

/// An event's JSON text on its way to the journal: the UTF-8 bytes its system's encoder wrote, kept as they are (a
/// `String` made of them cost an allocation, a validation and a copy a post, and was copied into the statement's
/// buffer again; session 31). A literal or a string makes one too, for the records a test or a tool writes.
public struct EventText: Sendable, Equatable, ExpressibleByStringInterpolation, CustomStringConvertible {
    /// The text's UTF-8 bytes.
    public var utf8: [UInt8]

    /// The text of `utf8`, valid UTF-8 (an encoder's output).
    public init(utf8: [UInt8]) {
        self.utf8 = utf8
    }

    /// The text of `string`.
    public init(_ string: String) {
        utf8 = Array(string.utf8)
    }

    public init(stringLiteral value: String) {
        self.init(value)
    }

    public init(stringInterpolation: DefaultStringInterpolation) {
        self.init(String(stringInterpolation: stringInterpolation))
    }

    /// The text as a string.
    public var description: String { String(decoding: utf8, as: UTF8.self) }
}

/// What the journal keeps beside an event since schema version 6: the system's schema version it was written with,
/// when it was recorded and the checksum of the state it produced (`StateChecksum` of the encoded state). The
/// defaults are what an older row reads as.
public struct EventStamp: Sendable, Equatable {
    /// The system's schema version of the event's JSON (and of the state the checksum is of).
    public var version: Int
    /// When the event was recorded, milliseconds since 1970; nil when unknown.
    public var time: Int64?
    /// The checksum of the encoded state the event produced; nil when unknown.
    public var stateChecksum: UInt64?
    /// The name of the feedback whose effect produced the event (`Feedback.named`, else "feedback N"); nil for a
    /// client's event, and when the loop did not say (and on rows written before schema version 9).
    public var feedback: String?

    /// Creates a stamp.
    public init(version: Int = 1, time: Int64? = nil, stateChecksum: UInt64? = nil, feedback: String? = nil) {
        self.version = version
        self.time = time
        self.stateChecksum = stateChecksum
        self.feedback = feedback
    }

    /// Whether the row's checksum covers the stamp: only when it differs from what an older row reads as, so that
    /// older rows keep their checksums.
    var isChecksummed: Bool { version != 1 || time != nil || stateChecksum != nil || feedback != nil }
}
