package import FeedbackJSON
package import SessionJournal
import SystemKit

/// One state the inspection recomputed: the state right after `revision`, and the event that made it (nil for the
/// first state, which the replay starts from).
package struct InspectedState: Sendable {
    /// The revision.
    package var revision: UInt64
    /// The state as this build encodes it.
    package var state: JSONValue
    /// The journaled event that produced it; nil for the replay's starting state.
    package var event: JournalEvent?
}

/// Why states could not be recomputed: a journaled value no longer reads, or a recomputed state differs from what the
/// journal says it was (`mismatch`, never answered as a state).
package struct InspectionFailure: Error, Sendable {
    /// What happened, naming the revision.
    package var message: String
    /// The journal and the replay disagree (a tampered or damaged record, or a reducer that changed).
    package var mismatch: Bool
}

/// Recomputes a session's states from a part of its journaled history (`SessionHistory` from
/// `history(of:from:through:)`): from its first kept state through the system's pure reducer, checking each state
/// against the checksum journaled with the event that made it (when written at this build's schema version) and
/// against every kept snapshot on the way.
///
/// Concurrency: a pure function of its arguments; runs on any thread.
enum InspectionReplay {
    static func states<System: FeedbackSystem>(
        _ history: SessionHistory,
        _ revisions: ClosedRange<UInt64>,
        of system: System
    ) -> Result<[InspectedState], InspectionFailure> {
        func failure(_ message: String, mismatch: Bool = false) -> Result<[InspectedState], InspectionFailure> {
            .failure(InspectionFailure(message: message, mismatch: mismatch))
        }
        if let problem = history.problems.first { return failure("the journal: \(problem)", mismatch: true) }
        guard let base = history.snapshots.first else {
            return failure("the journal keeps no state at or before revision \(revisions.lowerBound)")
        }
        let versions = SchemaVersions(of: system)
        func decode<T: Decodable>(
            _ text: String,
            _ kind: SchemaVersions.Part,
            _ version: Int,
            _ what: String
        )
            -> Result<T, InspectionFailure>
        {
            do {
                let value = try versions.upcast(try JSONValue(parsing: text.utf8), kind, from: version)
                return .success(try value.decode(T.self))
            } catch {
                return .failure(InspectionFailure(message: "\(what) no longer reads: \(error)", mismatch: false))
            }
        }
        var current: System.State
        switch decode(base.state, .state, base.version, "the state at revision \(base.revision)")
            as Result<System.State, InspectionFailure>
        {
        case .success(let state): current = state
        case .failure(let failure): return .failure(failure)
        }
        var states: [InspectedState] = []
        func keep(_ revision: UInt64, _ bytes: [UInt8], _ event: JournalEvent?) {
            guard revisions.contains(revision) else { return }
            states.append(
                InspectedState(revision: revision, state: (try? JSONValue(parsing: bytes)) ?? .null, event: event)
            )
        }
        keep(base.revision, System.encodeState(current), nil)
        var revision = base.revision
        var nextKept = 1
        // Steps the journal holds no event for, which a kept snapshot covers: the events an effect sent before the
        // session's recorder was attached (at its creation, or when it was restored) were reduced without it, and
        // the snapshot journaled with its first step holds their state. The replay takes that state as it is, as an
        // activation does, and goes on from it.
        func adoptKept(at target: UInt64) -> InspectionFailure? {
            guard
                target > revision,
                let index = history.snapshots.firstIndex(where: { $0.revision == target })
            else {
                return InspectionFailure(message: "event \(revision + 1) is missing from the journal", mismatch: true)
            }
            let kept = history.snapshots[index]
            let stored: Result<System.State, InspectionFailure> = decode(
                kept.state,
                .state,
                kept.version,
                "the kept state at revision \(target)"
            )
            switch stored {
            case .success(let state): current = state
            case .failure(let failure): return failure
            }
            revision = target
            nextKept = max(nextKept, index + 1)
            keep(revision, System.encodeState(current), nil)
            return nil
        }
        for event in history.events where event.revision > base.revision {
            guard event.revision <= revisions.upperBound else { break }
            if event.revision > revision + 1, let failure = adoptKept(at: event.revision - 1) {
                return .failure(failure)
            }
            guard event.revision == revision + 1 else {
                return failure("event \(revision + 1) is missing from the journal", mismatch: true)
            }
            let decoded: Result<System.Event, InspectionFailure> = decode(
                event.event,
                .event,
                event.stamp.version,
                "event \(event.revision)"
            )
            switch decoded {
            case .success(let next): System.reduce(&current, next)
            case .failure(let failure): return .failure(failure)
            }
            revision = event.revision
            let bytes = System.encodeState(current)
            if let sum = event.stamp.stateChecksum, event.stamp.version == versions.current,
                StateChecksum.of(bytes) != sum
            {
                return failure(
                    "the state recomputed at revision \(revision) does not match the checksum journaled with its event "
                        + "(journaled \(sum), recomputed \(StateChecksum.of(bytes))): the journal was changed, or this "
                        + "build's reducer differs; run feedback-host verify",
                    mismatch: true
                )
            }
            while nextKept < history.snapshots.count, history.snapshots[nextKept].revision < revision { nextKept += 1 }
            // Every kept state at this revision (a kept snapshot and the latest one may both be).
            while nextKept < history.snapshots.count, history.snapshots[nextKept].revision == revision {
                let kept = history.snapshots[nextKept]
                nextKept += 1
                let stored: Result<System.State, InspectionFailure> = decode(
                    kept.state,
                    .state,
                    kept.version,
                    "the kept state at revision \(revision)"
                )
                guard case .success(let keptState) = stored else { return failure("the kept state at \(revision)") }
                if System.encodeState(keptState) != bytes {
                    let patch = JSONPatch.diff(
                        from: (try? JSONValue(parsing: bytes)) ?? .null,
                        to: (try? JSONValue(parsing: System.encodeState(keptState))) ?? .null
                    )
                    return failure(
                        "the journaled state at revision \(revision) differs from the state its events make "
                            + "(\(String(decoding: patch.json.serialized(), as: UTF8.self))): the journal was changed; "
                            + "run feedback-host verify",
                        mismatch: true
                    )
                }
            }
            keep(revision, bytes, event)
        }
        if revision < revisions.upperBound, history.snapshots.contains(where: { $0.revision == revisions.upperBound }) {
            if let failure = adoptKept(at: revisions.upperBound) { return .failure(failure) }
        }
        guard revision >= revisions.upperBound || states.last?.revision == revisions.upperBound else {
            return failure("the journal holds revisions up to \(revision), not \(revisions.upperBound)")
        }
        return .success(states)
    }
}
