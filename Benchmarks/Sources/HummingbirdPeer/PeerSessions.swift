import FeedbackService
import Synchronization

/// The peer's session table: id → session.
///
/// Concurrency contract: one `Mutex` guards the dictionary; sessions themselves are thread-safe.
final class PeerSessions: Sendable {
    private let table = Mutex<[String: PeerSession]>([:])

    /// Starts a counter session and returns its new random id (the same 22-character ids FeedbackHost uses).
    func create() -> (id: String, session: PeerSession) {
        let id = SessionID.random().description
        let session = PeerSession()
        table.withLock { $0[id] = session }
        return (id, session)
    }

    /// The session with this id, if any.
    func session(_ id: String) -> PeerSession? {
        table.withLock { $0[id] }
    }
}
