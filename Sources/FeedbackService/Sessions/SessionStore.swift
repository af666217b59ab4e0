import Synchronization

/// The sessions of one server, by id, under one `Mutex` (held only to look up, insert or remove).
final class SessionStore: Sendable {
    private let sessions = Mutex<[SessionID: any HostedSession]>([:])
    let capacity: Int

    init(capacity: Int) {
        self.capacity = capacity
    }

    var count: Int { sessions.withLock { $0.count } }

    subscript(id: SessionID) -> (any HostedSession)? {
        sessions.withLock { $0[id] }
    }

    /// Adds a session made by `make` unless the store is full.
    func insert(_ make: () throws(APIError) -> any HostedSession) throws(APIError) -> any HostedSession {
        // Made outside the lock, because starting a loop runs its feedbacks; added under it.
        let session = try make()
        let added = sessions.withLock { sessions -> Bool in
            guard sessions.count < capacity else { return false }
            sessions[session.id] = session
            return true
        }
        guard added else {
            session.stop()
            throw APIError(
                .atCapacity,
                "the server holds its maximum of \(capacity) sessions; delete unused sessions or retry later",
                retryAfter: 5
            )
        }
        return session
    }

    /// Removes and returns a session.
    func remove(_ id: SessionID) -> (any HostedSession)? {
        sessions.withLock { $0.removeValue(forKey: id) }
    }

    /// Removes and returns the sessions last used before `cutoff` (uptime nanoseconds).
    func removeIdle(before cutoff: UInt64) -> [any HostedSession] {
        sessions.withLock { sessions in
            let idle = sessions.values.filter { $0.lastActive < cutoff }
            for session in idle { sessions[session.id] = nil }
            return idle
        }
    }

    /// Removes every session.
    func removeAll() -> [any HostedSession] {
        sessions.withLock { sessions in
            defer { sessions.removeAll() }
            return Array(sessions.values)
        }
    }
}
