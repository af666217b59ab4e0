import FeedbackLoop
import Foundation
import SessionJournal

/// Journals one session's history in loop order: its creation, every reduced event (client events and the
/// events of its effects) with its revision, and a snapshot every `snapshotInterval` revisions.
///
/// It is a loop observer, so it sees every step, in order, on the engine owner's thread, before a batch's
/// completion runs: by the time a POST has its step, the events up to it are queued in the journal.
///
/// Concurrency: `record(_:)` runs only in the loop's observer calls, which the loop serialises; `creation` and
/// `startRevision` are touched only there.
final class SessionRecorder<System: FeedbackSystem>: @unchecked Sendable {
    private let id: String
    private let persistence: SessionPersistence
    private let clientTypes: Set<String>
    private var creation: SessionCreation?
    private let startRevision: UInt64

    /// `creation` is journaled with the first step (nil for a restored session); `revision` is the revision
    /// the loop starts at.
    init(id: SessionID, system: System, persistence: SessionPersistence, creation: SessionCreation?, revision: UInt64) {
        self.id = id.description
        self.persistence = persistence
        clientTypes = Set(system.clientEventTypes)
        self.creation = creation
        startRevision = revision
    }

    /// Observes `loop` until it stops.
    func attach(to loop: Loop<System.State, System.Event>) {
        loop.observe { step in self.record(step) }
    }

    private func record(_ step: Step<System.State, System.Event>) {
        guard let event = step.event else {
            // The first call: the current step. Events an effect sent before the observer was attached were
            // reduced without it; a snapshot at the current revision covers them.
            var records: [JournalRecord] = []
            if let creation { records.append(.created(creation)) }
            creation = nil
            if step.revision != startRevision { records.append(snapshot(step)) }
            if !records.isEmpty { persistence.record(records) }
            return
        }
        let encoded: JSONValue
        do {
            encoded = try JSONValue(encoding: event)
        } catch {
            preconditionFailure("an event of system \(System.self) failed to encode: \(error)")
        }
        var origin = EventOrigin.effect
        if case .object(let members) = encoded, case .string(let type)? = members["type"], clientTypes.contains(type) {
            origin = .client
        }
        let text = String(decoding: encoded.serialized(), as: UTF8.self)
        var records: [JournalRecord] = [.event(sessionID: id, revision: step.revision, event: text, origin: origin)]
        if step.revision % persistence.snapshotInterval == 0 { records.append(snapshot(step)) }
        persistence.record(records)
    }

    private func snapshot(_ step: Step<System.State, System.Event>) -> JournalRecord {
        let state = String(decoding: SystemSession<System>.encode(step.state), as: UTF8.self)
        return .snapshot(sessionID: id, revision: step.revision, state: state)
    }
}
