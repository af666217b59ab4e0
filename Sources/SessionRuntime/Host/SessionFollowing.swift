/// What follows sessions from above the runtime (the streams of `SessionStreams`): the host spares a followed session
/// when it looks for idle ones or for room, and ends its followers when the session ends or leaves this replica.
///
/// Implementations are thread-safe: the host calls from any thread, some calls under its activation lock.
package protocol SessionFollowing: Sendable {
    /// Whether anything follows session `id` now.
    func isFollowing(_ id: SessionID) -> Bool
    /// Ends whatever follows session `id`: with the reason the session ended, or nil when it only left memory here
    /// (shutdown, another replica took it, re-anchored).
    func end(_ id: SessionID, reason: SessionEnd?)
}

/// Why a session ended for good, as its streams are told (`event: ended`).
package enum SessionEnd: String, Sendable {
    /// `DELETE /v1/sessions/{id}`.
    case deleted
    /// Idle past `session.idle.ms` without a journal to passivate into.
    case expired
}
