/// What follows sessions from above the runtime (the streams of `SessionStreams`): the host spares a followed session
/// when it looks for idle ones or for room, and ends its followers when the session ends or leaves this replica.
///
/// Implementations are thread-safe: the host calls from any thread, some calls under its activation lock.
package protocol SessionFollowing: Sendable {
    /// Whether anything follows session `id` now.
    func isFollowing(_ id: SessionID) -> Bool
    /// Ends whatever follows session `id`: with the reason the session ended or left this replica, or nil when the
    /// server shuts down (its streams were drained before).
    func end(_ id: SessionID, reason: SessionEnd?)

    /// The sessions followed now, in no order: the ones whose ownership the host watches with a shared journal.
    var followed: [SessionID] { get }
}

/// Why a session's copy here ended, as its streams are told: `event: ended` for good (deleted, expired), or
/// `event: moved` when the session lives on and a client resumes it by its cursor wherever the balancer sends it.
package enum SessionEnd: String, Sendable {
    /// `DELETE /v1/sessions/{id}`.
    case deleted
    /// Idle past `session.idle.ms` without a journal to passivate into.
    case expired
    /// Not for good: this replica no longer holds the session (another replica took it over after a ring change or
    /// a lapsed lease, fenced its write, passivated or deleted it there), or it was re-anchored under a new epoch.
    case moved
}
