import FeedbackJSON
import SessionJournal
import SystemKit

/// Rebuilds a session of one concrete system from what the journal recovered: decodes the base state and every
/// event after it, folds the events with the pure reducer, and starts the loop at the recovered revision, so
/// the feedbacks start from the restored state (an effect the state asks for runs again).
///
/// Concurrency: a pure function of its arguments; runs on the thread that restores sessions at start.
enum SessionRestorer {
    static func restore<System: FeedbackSystem>(
        _ recovered: RecoveredSession,
        of system: System,
        clientTypes: Set<String>,
        id: SessionID,
        inboxCapacity: Int,
        environment: SessionEnvironment,
        persistence: SessionPersistence
    ) throws(APIError) -> SystemSession<System> {
        var state: System.State
        do {
            state = try decode(System.State.self, from: recovered.baseState)
        } catch {
            throw APIError(
                .sessionBroken,
                "its state at revision \(recovered.baseRevision) no longer decodes as a state of \(system.name) "
                    + "(\(SystemEvents.describe(error, subject: "the state")))"
            )
        }
        for event in recovered.events {
            do {
                System.reduce(&state, try decode(System.Event.self, from: event.event))
            } catch {
                throw APIError(
                    .sessionBroken,
                    "event \(event.revision) \(event.event) no longer decodes as an event of \(system.name) "
                        + "(\(SystemEvents.describe(error)))"
                )
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
            revision: recovered.revision
        )
        recorder.restoring(from: state)
        if recovered.damage == nil {
            // Active again: the mark that nothing follows its snapshot goes before anything else it appends.
            recorder.journal([.settled(sessionID: id.description, revision: nil)])
        } else {
            // Clients may have seen revisions past the damage (or past the last write that worked): a new epoch keeps
            // old cursors from matching. The session is journaled afresh from here, with the answers its state still
            // holds (a creation record drops the old ones), in one append made before its loop runs: the session's
            // first durability wait covers it.
            epoch = UInt64.random(in: 1...UInt64(UInt32.max))
            var creation = recovered.creation
            creation.epoch = epoch
            let state = String(decoding: encodedState, as: UTF8.self)
            recorder.journal(
                [.created(creation), .snapshot(sessionID: creation.id, revision: recovered.revision, state: state)]
                    + recovered.answers.map { .answered($0) }
            )
        }
        return SystemSession(
            id: id,
            system: system,
            epoch: epoch,
            state: state,
            revision: recovered.revision,
            inboxCapacity: inboxCapacity,
            environment: environment,
            recorder: recorder,
            account: account,
            encodedState: encodedState
        )
    }

    /// Journaled JSON text (what `JSONEncoder` wrote) into `type`: parsed by the strict `JSONParser`, then decoded
    /// from the `JSONValue` directly, as posted events are; errors are `JSONSyntaxError` or `DecodingError`.
    static func decode<T: Decodable>(_ type: T.Type, from text: String) throws -> T {
        try JSONValue(parsing: text.utf8).decode(type)
    }
}
