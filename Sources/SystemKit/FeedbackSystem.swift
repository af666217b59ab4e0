public import FeedbackJSON
public import FeedbackLoop
public import Logging
public import Upstream

/// A feedback system the service can host: a name, a `Codable` state and events, an initial state, a pure reducer
/// and feedbacks. A library user conforms a type to this and registers an instance with the service; the
/// instance carries the system's configuration (delays, upstream URLs), the reducer stays static and pure.
///
/// Events travel as JSON objects tagged by `"type"` with the case's fields beside it (`{"type":"add","amount":2}`);
/// `Event`'s `Codable` conformance must read and write that shape. Only `clientEventTypes` may be posted by clients;
/// the other types are an effect's results.
public protocol FeedbackSystem: Sendable {
    /// The system's state, sent to clients as JSON.
    associatedtype State: Codable & Equatable & Sendable
    /// The system's events, tagged by `"type"` on the wire.
    associatedtype Event: Codable & Sendable

    /// The name clients create sessions with, e.g. `counter`.
    var name: String { get }
    /// One or two sentences for people browsing `GET /v1/systems`.
    var summary: String { get }
    /// The `"type"` tags clients may post; the rest are internal.
    var clientEventTypes: [String] { get }
    /// Events a client could post, shown as examples.
    var exampleEvents: [Event] { get }
    /// The state a new session starts from unless the client gives one.
    var initialState: State { get }

    /// The pure reducer: applies one event to the state.
    static func reduce(_ state: inout State, _ event: Event)

    /// The feedbacks that run the system's effects, given what the host provides.
    func feedbacks(_ environment: SystemEnvironment) -> [Feedback<State, Event>]

    /// The earliest durable-timer deadline `state` waits for, nil for none (the default). The host indexes it
    /// with the journal and wakes a session that left memory when it comes, so that its timer fires on time.
    /// Read it from the state only (it is called after every reduce).
    func nextDeadline(of state: State) -> WallTime?

    /// The version of the JSON this build writes for `State` and `Event` (1 by default). Raise it when a change
    /// would not read older JSON (a renamed field, a new required one), and add the migration that turns the older
    /// JSON into the new: journaled sessions, `feedback-host verify` and fixtures then read every older version.
    var schemaVersion: Int { get }
    /// One migration per version step, from 1 up to `schemaVersion` (none by default). See `SchemaMigration`.
    var migrations: [SchemaMigration] { get }
    /// How much of a session's history the journal keeps, written as `--history-retention` is (`forever`,
    /// `events:N`, `age:30d`, `snapshots:N`); nil (the default) leaves it to the server's setting.
    var historyRetention: String? { get }
    /// JSON Pointers (RFC 6901) into the state and events whose values the inspection routes replace with
    /// `"[redacted]"` before any byte leaves the server (`/user/email`); none by default.
    var redactedPointers: [String] { get }

    /// An event as the journal writes it: what `JSONEncoder()` with its default options writes. Implemented for
    /// every system (`@FeedbackEvent`'s events write themselves); a requirement so that the host, which is generic
    /// over the system, reaches an event enum's own writer.
    static func encodeEvent(_ event: Event) throws -> [UInt8]

    /// The state as the host writes it everywhere: compact JSON with sorted keys, slashes not escaped. Implemented
    /// for every system (a `@FeedbackSchema` state writes itself); a requirement so that the host, which is generic
    /// over the system, reaches a state's own writer.
    static func encodeState(_ state: State) -> [UInt8]

    /// An event from its JSON (a posted one): what `Event`'s `Decodable` reads, and its errors. Implemented for every
    /// system (a `@FeedbackEvent` enum reads the cases of plain fields without a decoder); a requirement so that the
    /// host, which is generic over the system, reaches it.
    static func decodeEvent(_ value: JSONValue) throws -> Event

    /// A posted event from its object's members (read where the body's bytes lie, with no `JSONValue` made), or nil
    /// to leave it to `decodeEvent(_:)`, which reads it and says what is wrong. Implemented for every system (a
    /// `@FeedbackEvent` enum reads the cases of plain fields; the default reads none): `decodeEvent(_:)` of an object
    /// tries it first, so the two read the same. A system that writes its own `decodeEvent(_:)` writes this too (nil
    /// is always right).
    static func decodeEvent(plain fields: EventFields) -> Event?
}

extension FeedbackSystem {
    /// No durable timers.
    public func nextDeadline(of state: State) -> WallTime? { nil }
}

/// What the host gives a system's feedbacks: time (a clock, and the wall time durable timers keep), upstream HTTP, a logger with the session's id, and the server's
/// own address. A value type: safe to pass anywhere.
public struct SystemEnvironment: Sendable {
    /// The clock effects sleep on: the real clock in the server, a `TestClock` in tests.
    public var clock: any Clock<Duration>
    /// The wall-clock time durable timers read and wait for: a deadline kept in the state survives a restart.
    public var wallClock: WallClock
    /// Upstream HTTP for fetching feedbacks.
    public var upstream: any UpstreamFetching
    /// A logger carrying the session's metadata.
    public var logger: Logger
    /// The base URL of this server's own listener (`http://127.0.0.1:8080`), for feedbacks that fetch what the
    /// server itself serves (the demo catalog); nil when no server listens (a loop in a test).
    public var localBaseURL: String?
    /// Told when each effect of the session's loop starts and ends: the server's `TestClock` under
    /// `--clock manual`, so that advancing it can wait until every timer that fired was followed through; nil
    /// otherwise.
    public var effectTracker: (any EffectTracking)?

    /// Creates an environment. Without a `wallClock`, the wall time starts at the real time now and moves with
    /// `clock` (so a `TestClock` moves both).
    public init(
        clock: any Clock<Duration>,
        wallClock: WallClock? = nil,
        upstream: any UpstreamFetching,
        logger: Logger,
        localBaseURL: String? = nil,
        effectTracker: (any EffectTracking)? = nil
    ) {
        self.clock = clock
        self.wallClock = wallClock ?? .following(clock, from: .now())
        self.upstream = upstream
        self.logger = logger
        self.localBaseURL = localBaseURL
        self.effectTracker = effectTracker
    }
}

extension FeedbackSystem {
    /// Starts a loop of this system from `state` (at `revision`, 0 for a new session) with its feedbacks in
    /// `environment`.
    public func makeLoop(
        from state: State,
        revision: UInt64 = 0,
        environment: SystemEnvironment
    ) -> Loop<State, Event> {
        Loop(
            initial: state,
            revision: revision,
            reduce: Self.reduce,
            feedbacks: feedbacks(environment),
            effectTracker: environment.effectTracker
        )
    }
}
