package import FeedbackJSON
import Foundation
package import SessionJournal
public import SystemKit

/// The parts of a session's way that handle the system's own types (its events, states and steps), as closures made
/// where those types are concrete (`HostedSystem.init`, inlinable, compiled in the module that registers the system):
/// a post's decode, trial reduce, encoding, queueing on the loop and answer (`post`), and the journal's record of each
/// step (`attach`). A session is reached through `any HostedSession`, whose witnesses run generic over the system:
/// without these, every post would look up the metadata of its generic types (a step, the loop's core) several times
/// and copy its values through their witnesses.
@usableFromInline
struct SessionPaths<System: FeedbackSystem>: Sendable {
    /// `SystemSession.postNow`, specialised.
    @usableFromInline let post: @Sendable (SystemSession<System>, PostedEvents, String?, PostAnswer) -> Void
    /// `SessionRecorder.attach(to:)`, specialised: the recorder's observer of every step of the session's loop.
    @usableFromInline let attach: @Sendable (SessionRecorder<System>, SystemSession<System>) -> Void

    @inlinable
    init(
        post: @escaping @Sendable (SystemSession<System>, PostedEvents, String?, PostAnswer) -> Void,
        attach: @escaping @Sendable (SessionRecorder<System>, SystemSession<System>) -> Void
    ) {
        self.post = post
        self.attach = attach
    }
}

/// A registered system with its types erased: what the service lists and starts sessions of.
public struct HostedSystem: Sendable {
    /// The system's name.
    public let name: String
    /// The entry of `GET /v1/systems`.
    package let description: JSONValue
    private let start:
        @Sendable (SessionID, UInt64, JSONValue?, Int, SessionEnvironment, SessionPersistence?) throws(APIError) ->
            any HostedSession
    private let restore:
        @Sendable (RecoveredSession, SessionID, Int, SessionEnvironment, SessionPersistence) throws(APIError) ->
            any HostedSession

    /// The system itself, its types erased: what the verifier and the inspection replay a journaled history through
    /// (opening it, so that its reducer runs on its own types).
    package let system: any FeedbackSystem
    /// The system's schema version in this build.
    public let schemaVersion: Int
    /// The history the journal keeps of its sessions, as the system declares it (nil: the server's setting).
    package let historyRetention: HistoryRetention?
    /// The JSON Pointers the inspection routes redact in its states and events.
    package let redactions: [JSONPointer]

    /// Wraps a system.
    ///
    /// Inlinable for one reason: the closures below are then compiled where `System` is concrete (the caller's
    /// module), so a post's way through its session and the loop's queue runs specialised for the system's state and
    /// events (`SessionPaths`). The rest of a session runs unspecialised, behind `any HostedSession`.
    @inlinable
    public init<System: FeedbackSystem>(_ system: System) {
        self.init(
            system,
            paths: SessionPaths(
                post: { session, events, ifMatch, post in session.postNow(events, ifMatch: ifMatch, post) },
                attach: { recorder, session in recorder.attach(to: session) }
            )
        )
    }

    /// Wraps a system whose sessions handle its types through `paths`.
    @usableFromInline
    init<System: FeedbackSystem>(_ system: System, paths: SessionPaths<System>) {
        name = system.name
        schemaVersion = system.schemaVersion
        self.system = system
        historyRetention = system.historyRetention.flatMap(HistoryRetention.init(parsing:))
        redactions = system.redactedPointers.compactMap { try? JSONPointer($0) }
        let examples = system.exampleEvents.compactMap { try? JSONValue(encoding: $0) }
        let initial = (try? JSONValue(encoding: system.initialState)) ?? .null
        // The schemas the macros derived (@FeedbackSchema on the state, @FeedbackEvent on the events), if any.
        let stateSchema = (System.State.self as? any JSONSchemaDescribing.Type)?.jsonSchema
        var entry: [String: JSONValue] = [
            "name": .string(system.name),
            "description": .string(system.summary),
            "initialState": initial,
            "clientEvents": .array(system.clientEventTypes.map { .string($0) }),
            "exampleEvents": .array(examples),
        ]
        if let stateSchema { entry["stateSchema"] = stateSchema.document }
        if let tagged = System.Event.self as? any TaggedEvent.Type {
            let cases = tagged.eventCases
            let clients = Set(system.clientEventTypes)
            entry["eventSchema"] =
                JSONSchema(.object(["oneOf": .array(cases.filter { clients.contains($0.type) }.map(\.schema.json))]))
                .document
            entry["eventSchemas"] = .object(
                Dictionary(cases.map { ($0.type, $0.schema.document) }, uniquingKeysWith: { first, _ in first })
            )
        }
        description = .object(entry)
        let clientTypes = Set(system.clientEventTypes)
        start = { id, epoch, state, inboxCapacity, environment, persistence throws(APIError) in
            var initialState = system.initialState
            if let state {
                do {
                    initialState = try state.decode(System.State.self)
                } catch {
                    let mismatch = SystemEvents.mismatch(state, error, schema: stateSchema?.json)
                    throw APIError(
                        .invalidRequest,
                        "\"state\" is not a state of \(system.name): \(mismatch.sentence); "
                            + "GET /v1/systems/\(system.name) shows its initial state and schema",
                        extra: mismatch.members
                    )
                }
            }
            // Encoded once: for the budget, the creation record and the first snapshot.
            let encodedState = SystemSession<System>.encode(initialState)
            var account: SessionAccount?
            if let budget = environment.budget {
                account = try SessionAccount.open(in: budget, state: SessionBudget.weigh(encodedState))
            }
            let creation = SessionCreation(
                id: id.description,
                system: system.name,
                epoch: epoch,
                state: String(decoding: encodedState, as: UTF8.self),
                createdAt: Date().timeIntervalSince1970,
                version: system.schemaVersion
            )
            let paused = environment.effectsPaused
            let recorder = persistence.map { persistence in
                SessionRecorder<System>(
                    id: id,
                    clientTypes: clientTypes,
                    deadline: system.nextDeadline(of:),
                    wallClock: environment.system.wallClock,
                    persistence: persistence,
                    creation: paused ? nil : creation,
                    revision: 0,
                    version: system.schemaVersion
                )
            }
            // A fork's pause is journaled with its creation, in one append made before its loop starts (as a
            // re-anchored session's records are): no copy of it is ever read back without its pause.
            if paused { recorder?.journal([.created(creation), .paused(sessionID: id.description, true)]) }
            return SystemSession(
                id: id,
                system: system,
                paths: paths,
                epoch: epoch,
                state: initialState,
                inboxCapacity: inboxCapacity,
                environment: environment,
                recorder: recorder,
                account: account,
                encodedState: encodedState
            )
        }
        restore = { recovered, id, inboxCapacity, environment, persistence throws(APIError) in
            try SessionRestorer.restore(
                recovered,
                of: system,
                paths: paths,
                clientTypes: clientTypes,
                id: id,
                inboxCapacity: inboxCapacity,
                environment: environment,
                persistence: persistence
            )
        }
    }

    /// Starts a session of this system from `state` (its initial state when nil).
    package func startSession(
        id: SessionID,
        epoch: UInt64,
        state: JSONValue?,
        inboxCapacity: Int,
        environment: SessionEnvironment,
        persistence: SessionPersistence? = nil
    ) throws(APIError) -> any HostedSession {
        try start(id, epoch, state, inboxCapacity, environment, persistence)
    }

    /// Restores a journaled session of this system; throws `.sessionBroken` when its state or an event no
    /// longer decodes.
    package func restoreSession(
        _ recovered: RecoveredSession,
        id: SessionID,
        inboxCapacity: Int,
        environment: SessionEnvironment,
        persistence: SessionPersistence
    ) throws(APIError) -> any HostedSession {
        try restore(recovered, id, inboxCapacity, environment, persistence)
    }
}
