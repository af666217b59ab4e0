import Synchronization

/// The sessions of one server, by id, under one `Mutex` (held only to look up, insert or remove).
package final class SessionStore: Sendable {
    private let sessions = Mutex<[SessionID: any HostedSession]>([:])
    /// Ids whose session is being made (outside the lock): a second creation of the same id waits for none of it
    /// and is refused, so a session is never made twice, and never journaled twice.
    private let reserved = Mutex<Set<SessionID>>([])
    let capacity: Int

    package init(capacity: Int) {
        self.capacity = capacity
    }

    package var count: Int { sessions.withLock { $0.count } }

    /// Every session in memory (the list of sessions' active ones).
    package var all: [any HostedSession] { sessions.withLock { Array($0.values) } }

    package subscript(id: SessionID) -> (any HostedSession)? {
        sessions.withLock { $0[id] }
    }

    /// What `insert` did.
    package enum Insertion {
        /// The new session was added.
        case inserted(any HostedSession)
        /// A session with the same id was already there; the new one was stopped and dropped.
        case existing(any HostedSession)
    }

    /// Adds the session `make` makes for `id`, unless the store already holds one with that id (then `make` is not
    /// called), is full, or another request is making one for the same id right now (409 with `Retry-After`).
    package func insert(id: SessionID, _ make: () throws(APIError) -> any HostedSession) throws(APIError) -> Insertion {
        guard reserved.withLock({ $0.insert(id).inserted }) else {
            throw APIError(
                .sessionExists,
                "session \(id) is being created by another request; retry in a moment",
                retryAfter: 1
            )
        }
        defer { _ = reserved.withLock { $0.remove(id) } }
        if let existing = self[id] { return .existing(existing) }
        // Refused before it is made when the store is full: a session made starts journaling its creation.
        guard count < capacity else { throw full }
        // Made outside the lock, because starting a loop runs its feedbacks; added under it.
        let session = try make()
        let outcome = sessions.withLock { sessions -> Insertion? in
            if let existing = sessions[session.id] { return .existing(existing) }
            guard sessions.count < capacity else { return nil }
            sessions[session.id] = session
            return .inserted(session)
        }
        guard let outcome else {
            session.stop()
            throw full
        }
        if case .existing = outcome { session.stop() }
        return outcome
    }

    /// The error of an insertion into a full store.
    package var full: APIError {
        APIError(
            .atCapacity,
            "the server holds its maximum of \(capacity) sessions in memory, all in use (with a journal, idle ones "
                + "make room by leaving memory; these are watched); delete unused sessions or retry later",
            retryAfter: 5
        )
    }

    /// Makes room for `count` sessions at once, so adding them does not grow the table step by step.
    func reserveCapacity(_ count: Int) {
        sessions.withLock { $0.reserveCapacity(min(count, capacity)) }
    }

    /// Whether a request is making a session for `id` right now (it is reserved, not yet in the store).
    package func isBeingCreated(_ id: SessionID) -> Bool {
        reserved.withLock { $0.contains(id) }
    }

    /// What `insert(restored:)` did with a session read back from the journal; the caller stops one it did not add.
    package enum Restoring {
        /// Added.
        case inserted
        /// Not added: the store is full.
        case full
        /// Not added: the store holds a session with the same id, this one (the session to use).
        case existing(any HostedSession)
        /// Not added: a request is creating a session with the same id. The journal held that creation's first
        /// records, but the session is the creating request's, which adds it once it is made.
        case beingCreated
    }

    /// Adds a session restored from the journal (an activation). A session whose id is reserved by a creation is not
    /// added: the creation journals its session before it adds it, so a restore in between reads it from the
    /// journal. Looking at the reservations under the table's lock leaves no gap, because a creation adds its session
    /// before it gives up its reservation.
    package func insert(restored session: any HostedSession) -> Restoring {
        sessions.withLock { sessions in
            if reserved.withLock({ $0.contains(session.id) }) { return .beingCreated }
            if let existing = sessions[session.id] { return .existing(existing) }
            guard sessions.count < capacity else { return .full }
            sessions[session.id] = session
            return .inserted
        }
    }

    /// Puts `session` in the place of the session with its id and returns that one; nil (and nothing changes) when
    /// the store holds no session with that id.
    package func replace(_ session: any HostedSession) -> (any HostedSession)? {
        sessions.withLock { sessions in
            guard let old = sessions[session.id] else { return nil }
            sessions[session.id] = session
            return old
        }
    }

    /// Removes and returns a session.
    package func remove(_ id: SessionID) -> (any HostedSession)? {
        sessions.withLock { $0.removeValue(forKey: id) }
    }

    /// Whether the store holds its maximum of sessions.
    package var isFull: Bool { sessions.withLock { $0.count >= capacity } }

    /// Removes and returns the session used least recently, except those `watched` says someone watches (it is
    /// called under the store's lock); nil when every session is watched. One scan of the table: it runs only when
    /// the store is full.
    package func removeLeastRecentlyUsed(sparing watched: (SessionID) -> Bool) -> (any HostedSession)? {
        sessions.withLock { sessions in
            var oldest: (any HostedSession)?
            for session in sessions.values where !watched(session.id) {
                if oldest.map({ session.lastActive < $0.lastActive }) ?? true { oldest = session }
            }
            if let oldest { sessions[oldest.id] = nil }
            return oldest
        }
    }

    /// Removes and returns the sessions last used before `cutoff` (uptime nanoseconds), except those `watched`
    /// says someone still watches (it is called under the store's lock).
    package func removeIdle(before cutoff: UInt64, sparing watched: (SessionID) -> Bool) -> [any HostedSession] {
        sessions.withLock { sessions in
            let idle = sessions.values.filter { $0.lastActive < cutoff && !watched($0.id) }
            for session in idle { sessions[session.id] = nil }
            return idle
        }
    }

    /// Removes every session.
    package func removeAll() -> [any HostedSession] {
        sessions.withLock { sessions in
            defer { sessions.removeAll() }
            return Array(sessions.values)
        }
    }
}
