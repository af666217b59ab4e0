package import FeedbackJSON
import Foundation
import SessionJournal
package import SessionRuntime

/// The inspection routes' answers (issue 32): a session's history with patches, its state at any kept revision,
/// the patch between two revisions, and the list of sessions. Everything is read from the journal (one session's part
/// of it, through its index) and recomputed by the system's pure reducer, checked against the journaled checksums;
/// every state, event and patch is redacted (`FeedbackSystem.redactedPointers`) before it is answered.
///
/// Concurrency: runs on the calling thread; the journal's reads wait for their turn on its queue.
extension SessionHost {
    /// The most entries one history page holds.
    package static let historyPageLimit = 1000

    /// What a history page asks for.
    package struct HistoryQuery: Sendable {
        /// Entries after this revision (nil: from the first kept one).
        package var after: UInt64?
        /// Entries before this revision: the page just before it, or with `after` the entries between the two.
        package var before: UInt64?
        /// At most this many entries scanned.
        package var limit: Int
        /// Only entries of this origin ("client" or "effect").
        package var origin: String?
        /// Only events of this type.
        package var type: String?

        package init(after: UInt64?, before: UInt64?, limit: Int, origin: String?, type: String?) {
            self.after = after
            self.before = before
            self.limit = limit
            self.origin = origin
            self.type = type
        }
    }

    /// A page of session `id`'s history: `{"id","keptFrom","head","entries":[{"rev","time","origin","feedback",
    /// "event","patch"}],"next"}`, `next` the revision to ask `after` for the following page (null at the head).
    package func history(of id: SessionID, _ query: HistoryQuery) throws(APIError) -> JSONValue {
        let journal = try inspectedJournal(id)
        let bounds = try read(journal, id, from: 0, through: 0)
        let limit = UInt64(max(1, min(query.limit, Self.historyPageLimit)))
        var first: UInt64
        if let after = query.after {
            first = after
        } else if let before = query.before {
            first = before > limit + 1 ? before - limit - 1 : 0
        } else {
            first = bounds.keptFrom
        }
        first = min(max(first, bounds.keptFrom), bounds.head)
        var last = first + min(limit, bounds.head - first)
        if let before = query.before { last = min(last, before > 0 ? before - 1 : 0) }
        var entries: [JSONValue] = []
        if first < last {
            let (history, states, system) = try replay(journal, id, from: first, through: last)
            let redaction = Redaction(pointers: system.redactions)
            var previous = states.first.map { redaction.apply(to: $0.state) }
            for state in states.dropFirst() {
                let redacted = redaction.apply(to: state.state)
                defer { previous = redacted }
                guard let event = state.event else { continue }
                let origin = event.origin == .client ? "client" : "effect"
                if let wanted = query.origin, wanted != origin { continue }
                let value = (try? JSONValue(parsing: event.event.utf8)) ?? .string(event.event)
                if let wanted = query.type, Self.type(of: value) != wanted { continue }
                entries.append(
                    .object([
                        "rev": .int(Int64(state.revision)),
                        "time": event.stamp.time.map { .int(Int64($0)) } ?? .null,
                        "origin": .string(origin),
                        "feedback": event.stamp.feedback.map(JSONValue.string) ?? .null,
                        "event": redaction.apply(to: value),
                        "patch": JSONPatch.diff(from: previous ?? .null, to: redacted).json,
                    ])
                )
            }
            _ = history
        }
        let next: JSONValue = last < bounds.head && query.before == nil ? .int(Int64(last)) : .null
        var answer: [String: JSONValue] = [
            "id": .string(id.description),
            "keptFrom": .int(Int64(bounds.keptFrom)),
            "head": .int(Int64(bounds.head)),
            "entries": .array(entries),
            "next": next,
        ]
        if query.before != nil {
            answer["previous"] = first > bounds.keptFrom ? .int(Int64(first + 1)) : .null
        }
        return .object(answer)
    }

    /// `{"id","rev","state"}`: session `id`'s state right after `revision`, recomputed from the nearest kept state and
    /// checked. 410 for a revision no longer kept, 404 for one beyond the head, 500 when the journal and the replay
    /// disagree (naming the revision).
    package func state(of id: SessionID, at revision: UInt64) throws(APIError) -> JSONValue {
        let journal = try inspectedJournal(id)
        let (state, system) = try state(journal, id, at: revision)
        return .object([
            "id": .string(id.description),
            "rev": .int(Int64(revision)),
            "state": Redaction(pointers: system.redactions).apply(to: state),
        ])
    }

    /// `{"id","from","to","patch"}`: the RFC 6902 patch from the state at `from` to the state at `to`.
    package func diff(of id: SessionID, from: UInt64, to: UInt64) throws(APIError) -> JSONValue {
        let journal = try inspectedJournal(id)
        let (old, system) = try state(journal, id, at: from)
        let (new, _) = try state(journal, id, at: to)
        let redaction = Redaction(pointers: system.redactions)
        return .object([
            "id": .string(id.description),
            "from": .int(Int64(from)),
            "to": .int(Int64(to)),
            "patch": JSONPatch.diff(from: redaction.apply(to: old), to: redaction.apply(to: new)).json,
        ])
    }

    // MARK: - Reading and replaying

    func inspectedJournal(_ id: SessionID) throws(APIError) -> any SessionJournaling {
        try journalOfHistory(id, "a session's history is read from the journal; run it with --data-dir to inspect")
    }

    /// The journal to read session `id`'s history from (export, inspection): 409 `export-unavailable` without one
    /// (saying `why`, for a session in memory; 404 for any other), the session's fence problem while it is fenced.
    func journalOfHistory(_ id: SessionID, _ why: String) throws(APIError) -> any SessionJournaling {
        guard let persistence else {
            guard store[id] != nil else { throw Self.notFound(id) }
            throw APIError(.exportUnavailable, "this server keeps no journal (data.dir is none), and \(why)")
        }
        if let fenced = persistence.fenceProblem(id) { throw fenced }
        return persistence.journal
    }

    private func read(
        _ journal: any SessionJournaling,
        _ id: SessionID,
        from: UInt64,
        through: UInt64
    ) throws(APIError) -> SessionHistory {
        let history: SessionHistory?
        do {
            history = try journal.history(of: id.description, from: from, through: through)
        } catch {
            throw SessionPersistence.notRead(error)
        }
        guard let history else { throw Self.notFound(id) }
        return history
    }

    /// The states from `from` to `through` (each within the kept history and the head), recomputed and checked.
    private func replay(
        _ journal: any SessionJournaling,
        _ id: SessionID,
        from: UInt64,
        through: UInt64
    ) throws(APIError) -> (SessionHistory, [InspectedState], HostedSystem) {
        let history = try read(journal, id, from: from, through: through)
        guard let system = systems[history.creation.system] else {
            throw APIError(
                .sessionBroken,
                "session \(id) runs the system \(history.creation.system), which this server does not serve"
            )
        }
        if history.snapshots.isEmpty, let problem = history.problems.first {
            throw APIError(.historyMismatch, "session \(id): the journal: \(problem)")
        }
        switch InspectionReplay.states(history, from...through, of: system.system) {
        case .success(let states): return (history, states, system)
        case .failure(let failure):
            throw APIError(
                failure.mismatch ? .historyMismatch : .sessionSchemaUnreadable,
                "session \(id): \(failure.message)",
                extra: ["revision": .int(Int64(through))]
            )
        }
    }

    /// The state at `revision`, replayed from the kept state before it when there is one, so that a kept snapshot at
    /// `revision` itself is checked against the events that lead to it. Not redacted: a fork starts from it.
    func state(
        _ journal: any SessionJournaling,
        _ id: SessionID,
        at revision: UInt64
    ) throws(APIError) -> (JSONValue, HostedSystem) {
        let bounds = try read(journal, id, from: 0, through: 0)
        guard revision <= bounds.head else {
            throw APIError(
                .revisionNotFound,
                "session \(id) is at revision \(bounds.head); revision \(revision) does not exist yet",
                extra: ["head": .int(Int64(bounds.head))]
            )
        }
        guard revision >= bounds.keptFrom else {
            throw APIError(
                .revisionGone,
                "session \(id) keeps its history from revision \(bounds.keptFrom) on (history.retention); revision "
                    + "\(revision) is no longer kept: ask for \(bounds.keptFrom) or later",
                extra: ["keptFrom": .int(Int64(bounds.keptFrom))]
            )
        }
        let start = revision > bounds.keptFrom ? revision - 1 : revision
        let (_, states, system) = try replay(journal, id, from: start, through: revision)
        guard let last = states.last, last.revision == revision else {
            throw APIError(.historyMismatch, "session \(id): the journal holds no state at revision \(revision)")
        }
        return (last.state, system)
    }

    private static func type(of event: JSONValue) -> String? {
        if case .object(let members) = event, case .string(let type)? = members["type"] { return type }
        return nil
    }
}
