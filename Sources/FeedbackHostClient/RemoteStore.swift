import FeedbackJSON
import Foundation
import Observation
public import SystemKit

/// A session of `System` as a screen sees it: the server's confirmed state, the events sent and not yet confirmed,
/// and the state predicted by reducing those on the confirmed one with the system's own reducer.
///
/// `send` changes `state` at once and posts the event in order, one post at a time, each numbered
/// (`Client-ID`, `Client-Sequence`), so a retry after a lost answer is applied once. The session's stream (patch mode,
/// resumed by cursor, reconnected with jitter) moves `confirmed`; every stream event and answer says up to which of
/// this store's posts it includes, so an event is never counted twice. When a confirmed state differs from what the
/// reducer predicted for the same events, or the server's schema hash differs from this build's, `mispredictions`
/// counts it and prediction stops (`state` is then `confirmed.state`).
///
/// Concurrency: `@MainActor`; `Observable` (through its own `ObservationRegistrar`, as `@Observable` would, but with
/// key paths made once per store: a generic class's key path literal is built again at every use, about a fifth of
/// a followed stream's CPU on Linux), so SwiftUI and `Observations` see its changes. Network work runs in
/// tasks the store owns; `close()` ends them.
@MainActor
public final class RemoteStore<System: FeedbackSystem> {
    /// The server's latest state and its revision.
    public struct Confirmed: Equatable, Sendable {
        /// The state at `rev`.
        public var state: System.State
        /// The session's revision.
        public var rev: UInt64
    }

    /// An event sent and not yet confirmed, with its number among this store's posts.
    public struct Pending: Sendable {
        /// The post's `Client-Sequence`.
        public var sequence: UInt64
        /// The event.
        public var event: System.Event
    }

    /// How the store reaches the server.
    public enum Connection: Equatable, Sendable {
        /// Opening the stream.
        case connecting
        /// Following the stream.
        case live
        /// The stream or a post failed; trying again after the given time.
        case offline(retryingIn: Duration)
        /// The server refused the token (401, 403): `setToken` resumes.
        case needsToken
    }

    /// The session's id.
    public let session: String
    /// What observers see (`state`, `confirmed`, `pending`, …: RemoteStore+Observation.swift), each read and change
    /// told to `registrar` with a key path made once (`keys`).
    var observed: Observed
    let registrar = ObservationRegistrar()
    let keys = Keys()

    let system: System
    var host: FeedbackHost
    var nextSequence: UInt64 = 1
    /// The number of a post sent without an answer (it may have been applied), until that number is answered.
    var unanswered: UInt64?
    /// The highest number the server confirmed it included (answers and stream events' `clients`).
    var acknowledged: UInt64 = 0
    /// The highest number the server answered (applied, refused for good, or said it had taken). Only an answer says
    /// that the post is done: a server without a journal streams a state a restart forgets, and an answer lost with
    /// its connection leaves the store unsure, so a post the stream showed is sent again until it is answered. The
    /// sender goes on from here.
    var answered: UInt64 = 0
    /// Events the confirmed state includes (a stream event showed them) whose post has not been answered: no longer
    /// predicted, but sent again, with the same number, until the server answers them.
    var shownUnanswered: [Pending] = []
    /// The stream's own last value (patches apply to it), which may lag `confirmed` (a post's answer came first).
    var streamJSON: JSONValue?
    var streamRev: UInt64?
    var cursor: String?
    var reader: EventStreamReader?
    var streamTask: Task<Void, Never>?
    var sender: Task<Void, Never>?
    var failures = 0
    var closed = false
    /// Where the outbox is kept (`RemoteStore+Queue`), nil for memory only.
    let queueFile: URL?

    init(
        system: System,
        host: FeedbackHost,
        session: String,
        snapshot: [String: JSONValue],
        queueFile: URL? = nil
    ) throws {
        self.system = system
        self.queueFile = queueFile
        let saved = Self.savedQueue(queueFile, session: session)
        var host = host
        // A session created where the server mints tokens (`--auth-create open`) answers them: the store posts and
        // reads with the session's `post` token unless the host has one of its own.
        if host.token == nil, case .object(let tokens)? = snapshot["tokens"], case .string(let post)? = tokens["post"] {
            host.token = post
        }
        self.host = host
        self.session = session
        guard case .int(let rev)? = snapshot["rev"], let stateJSON = snapshot["state"] else {
            throw HostClientError(status: 0, message: "the session's answer has no rev and state")
        }
        let state = try stateJSON.decode(System.State.self)
        observed = Observed(
            state: state,
            confirmed: Confirmed(state: state, rev: UInt64(rev)),
            clientID: saved?.clientID ?? Self.newClientID()
        )
        if case .string(let cursor)? = snapshot["cursor"] { self.cursor = cursor }
        if case .string(let schema)? = snapshot["schema"], schema != system.schemaHash { stopPredicting() }
        if let saved {
            restore(saved)
            predict()
            pump()
        }
        openStream()
    }

    /// Applies `event` to `state` at once and posts it after the events before it.
    public func send(_ event: System.Event) {
        pending.append(Pending(sequence: nextSequence, event: event))
        nextSequence += 1
        predict()
        pump()
    }

    /// A new token after `needsToken`; the store resumes.
    public func setToken(_ token: String?) {
        host.token = token
        guard connection == .needsToken else { return }
        connection = .connecting
        openStream()
        pump()
    }

    /// Stops the stream and the posts; events still pending stay unsent.
    public func close() {
        closed = true
        streamTask?.cancel()
        reader?.cancel()
        sender?.cancel()
    }

    /// Waits until every event sent is confirmed and answered, and the confirmed revision is at least `rev` (polling,
    /// at most `timeout`); throws on the timeout.
    public func settle(atLeast rev: UInt64 = 0, timeout: Duration = .seconds(10)) async throws {
        let deadline = ContinuousClock.now + timeout
        while !(pending.isEmpty && shownUnanswered.isEmpty && confirmed.rev >= rev) {
            guard ContinuousClock.now < deadline else {
                throw HostClientError(
                    status: 0,
                    message: "not settled within \(timeout): \(pending.count) pending, "
                        + "\(shownUnanswered.count) shown but not answered, confirmed rev \(confirmed.rev)"
                )
            }
            try await Task.sleep(for: .milliseconds(5))
        }
    }

    /// `state` from `confirmed` and `pending`.
    func predict() {
        persist()
        guard predicting else {
            if state != confirmed.state { state = confirmed.state }
            return
        }
        var predicted = confirmed.state
        for item in pending { System.reduce(&predicted, item.event) }
        if predicted != state { state = predicted }
    }

    func stopPredicting() {
        mispredictions += 1
        predicting = false
    }

    /// Takes a confirmed state at `rev` that includes this store's posts up to `included`: drops those from
    /// `pending`, checks the prediction of them when nothing else happened in between, and predicts again.
    func confirm(_ newState: System.State, rev: UInt64, included: UInt64?) {
        guard rev > confirmed.rev || (rev == confirmed.rev && (included ?? 0) > acknowledged) else { return }
        let mine = max(acknowledged, included ?? 0)
        let covered = pending.filter { $0.sequence <= mine }
        if predicting, !covered.isEmpty, rev - confirmed.rev == UInt64(covered.count) {
            // Only this store's events happened: the reducer must have made the same state.
            var expected = confirmed.state
            for item in covered { System.reduce(&expected, item.event) }
            if expected != newState { stopPredicting() }
        }
        acknowledged = mine
        // Those not answered yet stay in the outbox: the state that shows them may not be journaled.
        shownUnanswered += covered.filter { $0.sequence > answered }
        pending.removeAll { $0.sequence <= mine }
        if rev >= confirmed.rev { confirmed = Confirmed(state: newState, rev: rev) }
        predict()
    }

    /// A jittered back-off: 100 ms doubling up to 5 s, each time between half and all of it.
    func backoff() -> Duration {
        failures += 1
        let ceiling = min(100 * (1 << min(failures, 6)), 5_000)
        return .milliseconds(Int.random(in: (ceiling / 2)...ceiling))
    }

    static func newClientID() -> String {
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")
        return String((0..<22).map { _ in alphabet[Int.random(in: 0..<64)] })
    }
}
