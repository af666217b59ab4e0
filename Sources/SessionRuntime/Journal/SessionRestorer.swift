import FeedbackJSON
import SessionJournal
package import SystemKit

/// Rebuilds a session of one concrete system from what the journal recovered: decodes the base state and every
/// event after it (upcast through the system's migrations when written at an older schema version), folds the
/// events with the pure reducer, and starts the loop at the recovered revision, so the feedbacks start from the
/// restored state (an effect the state asks for runs again). A session that needed a migration journals its migrated
/// state as a snapshot of this build's version, so it is read without migrating from then on.
///
/// Concurrency: a pure function of its arguments; runs on the thread that restores sessions at start.
package enum SessionRestorer {
    static func restore<System: FeedbackSystem>(
        _ recovered: RecoveredSession,
        of system: System,
        paths: SessionPaths<System>,
        clientTypes: Set<String>,
        id: SessionID,
        inboxCapacity: Int,
        environment: SessionEnvironment,
        persistence: SessionPersistence
    ) throws(APIError) -> SystemSession<System> {
        let versions = SchemaVersions(of: system)
        var migrated = recovered.baseVersion != versions.current
        var state: System.State = try load(
            recovered.baseState,
            .state,
            version: recovered.baseVersion,
            versions: versions,
            where: "its state at revision \(recovered.baseRevision)",
            session: id,
            system: system.name
        )
        // The replay runs the system's reducer: a trap in it is this session's activation (a crash mark).
        let marks = environment.containment?.marks ?? .disabled
        try marks.marking(session: id.description, kind: .activation, detail: "replay") { () throws(APIError) in
            for event in recovered.events {
                migrated = migrated || event.stamp.version != versions.current
                let decoded: System.Event = try load(
                    event.event,
                    .event,
                    version: event.stamp.version,
                    versions: versions,
                    where: "event \(event.revision) \(event.event)",
                    session: id,
                    system: system.name
                )
                System.reduce(&state, decoded)
            }
        }
        // Encoded once: the budget counts it (a restored session always is, it was acknowledged before), and it
        // is the first cached snapshot.
        let encodedState = SystemSession<System>.encode(state)
        let account = environment.budget.map {
            SessionAccount.restored(in: $0, state: SessionBudget.weigh(encodedState))
        }
        var epoch = recovered.creation.epoch
        let recorder = SessionRecorder<System>(
            id: id,
            clientTypes: clientTypes,
            deadline: system.nextDeadline(of:),
            wallClock: environment.system.wallClock,
            persistence: persistence,
            creation: nil,
            revision: recovered.revision,
            version: versions.current
        )
        recorder.restoring(from: state)
        let text = String(decoding: encodedState, as: UTF8.self)
        if recovered.damage == nil {
            // Active again: the mark that nothing follows its snapshot goes before anything else it appends. A
            // migrated session's state is journaled at this build's version: the next load reads it as it is.
            recorder.journal(
                [.settled(sessionID: id.description, revision: nil)]
                    + (migrated
                        ? [
                            .snapshot(
                                sessionID: id.description,
                                revision: recovered.revision,
                                state: text,
                                version: versions.current
                            )
                        ] : [])
            )
        } else {
            // Clients may have seen revisions past the damage (or past the last write that worked): a new epoch keeps
            // old cursors from matching. The session is journaled afresh from here, with the answers its state still
            // holds (a creation record drops the old ones), in one append made before its loop runs: the session's
            // first durability wait covers it.
            epoch = UInt64.random(in: 1...UInt64(UInt32.max))
            var creation = recovered.creation
            creation.epoch = epoch
            if migrated {
                // The creation's state is of the old version; the snapshot right after it is what is read back.
                creation.state = text
                creation.version = versions.current
            }
            recorder.journal(
                [
                    .created(creation),
                    .snapshot(
                        sessionID: creation.id,
                        revision: recovered.revision,
                        state: text,
                        version: versions.current
                    ),
                ] + (recovered.effectsPaused ? [.paused(sessionID: creation.id, true)] : [])
                    + recovered.answers.map { .answered($0) } + recovered.clients.map { .sequenced($0) }
                    // The creation resets the token generation: the one read back is journaled again after it.
                    + (recovered.tokenGeneration > 0
                        ? [.tokens(sessionID: creation.id, generation: recovered.tokenGeneration)] : [])
            )
        }
        // A fork not resumed yet stays paused: its loop starts with its feedbacks stopped.
        var environment = environment
        environment.effectsPaused = recovered.effectsPaused
        return SystemSession(
            id: id,
            system: system,
            paths: paths,
            epoch: epoch,
            state: state,
            revision: recovered.revision,
            inboxCapacity: inboxCapacity,
            environment: environment,
            recorder: recorder,
            account: account,
            encodedState: encodedState,
            tokenGeneration: recovered.tokenGeneration,
            clients: recovered.clients
        )
    }

    /// Journaled JSON `text` of schema `version` as a `T` of this build: parsed, upcast, decoded. Throws the problem
    /// that names the session, the version and where it failed.
    package static func load<T: Decodable>(
        _ text: String,
        _ part: SchemaVersions.Part,
        version: Int,
        versions: SchemaVersions,
        where subject: String,
        session: SessionID,
        system: String
    ) throws(APIError) -> T {
        let value: JSONValue
        do {
            value = try JSONValue(parsing: text.utf8)
        } catch {
            throw APIError.unreadable(
                session: session,
                "\(subject) is not JSON (\(error))",
                version: version,
                current: versions.current
            )
        }
        let upcast: JSONValue
        do {
            upcast = try versions.upcast(value, part, from: version)
        } catch {
            throw APIError.unreadable(
                session: session,
                "\(subject): \(error.message)",
                version: version,
                current: versions.current,
                path: error.path,
                newer: error.code == .newer
            )
        }
        do {
            return try upcast.decode(T.self)
        } catch {
            throw APIError.unreadable(
                session: session,
                "\(subject) of schema version \(version) does not decode as \(part == .state ? "a state" : "an event") "
                    + "of \(system) at version \(versions.current) "
                    + "(\(SystemEvents.describe(error, subject: part == .state ? "the state" : "the event")))",
                version: version,
                current: versions.current,
                path: SchemaFailurePath.of(error)
            )
        }
    }

    /// Journaled JSON text (what `JSONEncoder` wrote) into `type`: parsed by the strict `JSONParser`, then decoded
    /// from the `JSONValue` directly, as posted events are; errors are `JSONSyntaxError` or `DecodingError`.
    static func decode<T: Decodable>(_ type: T.Type, from text: String) throws -> T {
        try JSONValue(parsing: text.utf8).decode(type)
    }
}

/// The JSON Pointer of a decoding error's field, `""` for the whole value.
package enum SchemaFailurePath {
    package static func of(_ error: any Error) -> String {
        guard let error = error as? DecodingError else { return "" }
        var keys: [any CodingKey]
        switch error {
        case .keyNotFound(let key, let context): keys = context.codingPath + [key]
        case .typeMismatch(_, let context), .valueNotFound(_, let context), .dataCorrupted(let context):
            keys = context.codingPath
        @unknown default: keys = []
        }
        return JSONPointer(tokens: keys.map { $0.intValue.map(String.init) ?? $0.stringValue }).description
    }
}
