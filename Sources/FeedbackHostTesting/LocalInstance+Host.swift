public import FeedbackHostClient
import Foundation

extension LocalInstance {
    /// The instance as a `FeedbackHost` (no token: a local instance runs with `--auth off` on 127.0.0.1), for
    /// `RemoteStore`s: `try await instance.host.createStore(CounterSystem())`.
    public var host: FeedbackHost { FeedbackHost(url: url) }
}

extension LocalInstance {
    /// The session's current revision (`GET /v1/sessions/{id}`): with `RemoteStore.settle(atLeast:)`, a test waits
    /// until a store has seen what an `advance` did.
    public func revision(of session: String) async throws -> UInt64 {
        struct Revision: Decodable { let rev: UInt64 }
        return try JSONDecoder().decode(Revision.self, from: try await request("GET", "/v1/sessions/\(session)")).rev
    }
}
