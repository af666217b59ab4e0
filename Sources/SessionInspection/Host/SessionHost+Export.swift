import FeedbackJSON
package import SessionJournal
package import SessionRuntime
package import SystemKit

/// A session as a test fixture (`SessionFixture`), from what the journal kept: what `GET /v1/sessions/{id}/export`
/// answers.
extension SessionHost {
    /// The fixture of session `id`: from the earliest kept snapshot the journal holds the events
    /// after, every kept event to the last journaled one. A session that could not be restored is exported too
    /// (that is when a fixture helps most). 409 without a journal, 404 for an unknown session.
    package func exportFixture(of id: SessionID) throws(APIError) -> SessionFixture {
        let journal = try journalOfHistory(
            id,
            "a fixture is made from the journal; run it with --data-dir to export sessions"
        )
        let history: SessionHistory?
        do {
            history = try journal.history(of: id.description)
        } catch {
            throw SessionPersistence.notRead(error)
        }
        guard let history else { throw Self.notFound(id) }
        let fixture: SessionFixture
        do {
            fixture = try SessionExport.fixture(history, schemaVersion: systems[history.creation.system]?.schemaVersion)
        } catch {
            throw APIError(
                .sessionSchemaUnreadable,
                "session \(id) cannot be exported: its journaled \(error.path) is not JSON (\(error.message))"
            )
        }
        return fixture
    }
}

/// Makes a `SessionFixture` of a journaled history.
///
/// Concurrency: pure functions.
package enum SessionExport {
    /// The fixture of `history`: from the earliest kept snapshot whose next revision's event is kept, every event
    /// after it without a gap; the later kept snapshots the events reach are its checkpoints. `schemaVersion` is the
    /// system's in this build (nil when it does not serve the system: the newest version journaled is given).
    package static func fixture(
        _ history: SessionHistory,
        schemaVersion: Int?
    ) throws(MigrationFailure) -> SessionFixture {
        let events = history.events
        let snapshots = history.snapshots
        let start =
            snapshots.firstIndex { snapshot in
                events.contains { $0.revision == snapshot.revision + 1 }
            } ?? snapshots.count - 1
        let base = snapshots[start]
        var steps: [SessionFixture.Event] = []
        var revision = base.revision
        for event in events where event.revision > base.revision {
            guard event.revision == revision + 1 else { break }
            revision = event.revision
            steps.append(
                SessionFixture.Event(
                    revision: event.revision,
                    origin: event.origin == .client ? "client" : "effect",
                    time: event.stamp.time,
                    schemaVersion: event.stamp.version,
                    event: try parse(event.event, "event \(event.revision)"),
                    stateChecksum: event.stamp.stateChecksum
                )
            )
        }
        var checkpoints: [SessionFixture.State] = []
        for snapshot in snapshots[(start + 1)...] where snapshot.revision <= revision {
            checkpoints.append(
                SessionFixture.State(
                    revision: snapshot.revision,
                    schemaVersion: snapshot.version,
                    state: try parse(snapshot.state, "state at revision \(snapshot.revision)")
                )
            )
        }
        let newest = ([base.version] + events.map(\.stamp.version)).max() ?? 1
        return SessionFixture(
            session: history.creation.id,
            system: history.creation.system,
            schemaVersion: schemaVersion ?? newest,
            base: SessionFixture.State(
                revision: base.revision,
                schemaVersion: base.version,
                state: try parse(base.state, "state at revision \(base.revision)")
            ),
            events: steps,
            checkpoints: checkpoints
        )
    }

    private static func parse(_ text: String, _ what: String) throws(MigrationFailure) -> JSONValue {
        do {
            return try JSONValue(parsing: text.utf8)
        } catch {
            throw MigrationFailure(path: what, "\(error)")
        }
    }
}
