import Glibc

/// A session held out of service because the process died inside its system's code (issue 31's crash-loop
/// protection): the service does not activate it on its own, starts none of its feedbacks and answers its requests
/// with a problem that gives `reason`, until an admin releases or deletes it.
///
/// Kept by the journal (`SessionJournaling.quarantine(_:reason:at:)`), so it outlives passivation and restarts, and,
/// in a shared journal, every replica reads it. A removal of the session, or a creation record of a new incarnation of
/// its id, ends it. A value: immutable and `Sendable`.
public struct Quarantine: Sendable, Equatable {
    /// The session's id.
    public var sessionID: String
    /// Why, as a sentence a person can act on (what was running when the process died).
    public var reason: String
    /// When it was quarantined, in milliseconds since 1970.
    public var at: Int64
    /// The host name of the replica that recorded it (the pod's name in a deployment); nil when unknown.
    public var replica: String?

    /// Creates a quarantine record.
    public init(sessionID: String, reason: String, at: Int64, replica: String? = nil) {
        self.sessionID = sessionID
        self.reason = reason
        self.at = at
        self.replica = replica
    }

    /// This machine's host name (`gethostname`), recorded as the `replica` of the quarantines it writes.
    package static let hostName: String? = {
        var buffer = [CChar](repeating: 0, count: 256)
        guard gethostname(&buffer, buffer.count - 1) == 0 else { return nil }
        let name = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return name.isEmpty ? nil : name
    }()
}
