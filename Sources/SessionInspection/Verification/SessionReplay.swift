import FeedbackJSON
import SessionJournal
import SessionRuntime
import SystemKit

/// Replays one session's kept history through a system of this build: from the earliest kept snapshot with the
/// events after it, decode it (upcast by the system's migrations), reduce each journaled event (upcast too), and
/// compare each state with the journal: its checksum after each event written at this build's schema version, and
/// every later kept snapshot (migrated to this version) byte for byte.
///
/// Concurrency: a pure function of its arguments; runs on any thread.
enum SessionReplay {
    static func verify<System: FeedbackSystem>(_ history: SessionHistory, of system: System) -> SessionVerdict {
        let versions = SchemaVersions(of: system)
        var verdict = SessionVerdict(
            session: history.creation.id,
            system: system.name,
            outcome: .identical,
            events: 0
        )
        func fail(_ message: String) -> SessionVerdict {
            verdict.outcome = .failed
            verdict.failure = message
            return verdict
        }
        if let problem = history.problems.first { return fail("the journal: \(problem)") }
        let snapshots = history.snapshots
        let events = history.events
        // The earliest kept snapshot the events follow on from without a gap; else the latest one alone.
        let startIndex =
            snapshots.firstIndex { snapshot in
                events.first.map { snapshot.revision + 1 >= $0.revision && snapshot.revision < events.last!.revision }
                    ?? false
            } ?? snapshots.count - 1
        var migrated = false
        func state(_ snapshot: KeptSnapshot) -> Result<(System.State, JSONValue), ReplayFailure> {
            migrated = migrated || snapshot.version != versions.current
            do {
                let value = try versions.upcast(
                    try JSONValue(parsing: snapshot.state.utf8),
                    .state,
                    from: snapshot.version
                )
                return .success((try value.decode(System.State.self), value))
            } catch let error as SchemaError {
                return .failure(
                    ReplayFailure(
                        message: "the state at revision \(snapshot.revision): \(error.message) at \(error.path ?? "")"
                    )
                )
            } catch {
                return .failure(
                    ReplayFailure(
                        message: "the state at revision \(snapshot.revision) (schema version \(snapshot.version)): "
                            + "\(SystemEvents.describe(error, subject: "the state")) at \(SchemaFailurePath.of(error))"
                    )
                )
            }
        }
        let start = snapshots[startIndex]
        var current: System.State
        switch state(start) {
        case .success(let decoded):
            current = decoded.0
            // A state of this build's version must read back as the same bytes; else the build changed its JSON.
            if start.version == versions.current {
                let again = System.encodeState(current)
                if !again.elementsEqual(start.state.utf8) {
                    verdict.outcome = .diverged
                    verdict.divergence = .init(
                        revision: start.revision,
                        comparedAt: start.revision,
                        patch: JSONPatch.diff(from: decoded.1, to: (try? JSONValue(parsing: again)) ?? .null)
                    )
                    return verdict
                }
            }
        case .failure(let failure): return fail(failure.message)
        }
        var revision = start.revision
        var next = startIndex + 1
        var firstDifferent: UInt64?
        for event in events where event.revision > start.revision {
            guard event.revision == revision + 1 else { break }  // a gap: nothing after it can be replayed
            migrated = migrated || event.stamp.version != versions.current
            do {
                let value = try versions.upcast(
                    try JSONValue(parsing: event.event.utf8),
                    .event,
                    from: event.stamp.version
                )
                System.reduce(&current, try value.decode(System.Event.self))
            } catch let error as SchemaError {
                return fail("event \(event.revision) \(event.event): \(error.message) at \(error.path ?? "")")
            } catch {
                return fail(
                    "event \(event.revision) \(event.event) (schema version \(event.stamp.version)): "
                        + "\(SystemEvents.describe(error)) at \(SchemaFailurePath.of(error))"
                )
            }
            revision = event.revision
            verdict.events += 1
            var encoded: [UInt8]?
            if firstDifferent == nil, let sum = event.stamp.stateChecksum, event.stamp.version == versions.current {
                let bytes = System.encodeState(current)
                encoded = bytes
                if StateChecksum.of(bytes) != sum { firstDifferent = revision }
            }
            while next < snapshots.count, snapshots[next].revision < revision { next += 1 }
            if next < snapshots.count, snapshots[next].revision == revision {
                let kept: JSONValue
                switch state(snapshots[next]) {
                case .success(let decoded): kept = (try? JSONValue(parsing: System.encodeState(decoded.0))) ?? decoded.1
                case .failure(let failure): return fail(failure.message)
                }
                let bytes = encoded ?? System.encodeState(current)
                let replayed = (try? JSONValue(parsing: bytes)) ?? .null
                if replayed != kept || firstDifferent != nil {
                    verdict.outcome = .diverged
                    verdict.divergence = .init(
                        revision: firstDifferent ?? revision,
                        comparedAt: revision,
                        patch: JSONPatch.diff(from: kept, to: replayed)
                    )
                    return verdict
                }
            }
        }
        if let firstDifferent {
            verdict.outcome = .diverged
            verdict.divergence = .init(revision: firstDifferent, comparedAt: nil, patch: nil)
            return verdict
        }
        if migrated { verdict.outcome = .migrated }
        return verdict
    }
}

/// Why a kept state could not be read during a replay.
struct ReplayFailure: Error {
    var message: String
}
