import Foundation
import SessionJournal
import Synchronization

/// Each record as the prepared statement that writes it, under the owner token it carries (see `PostgresSchema`).
///
/// Concurrency: called on the journal's queue, which owns `answerCounts`.
extension PostgresJournal {
    func statement(_ record: JournalRecord, owner: Int64?) -> PostgresConnection.Statement {
        let token = owner.map(String.init)
        switch record {
        case .created(let creation):
            answerCounts[creation.id] = nil  // a creation forgets the id's answers
            if !configuration.systemRetention.isEmpty {
                state.withLock { $0.systems[creation.id] = creation.system }
            }
            // The initial state is the first kept snapshot when snapshots are kept (as in SQLite's journal).
            let kept =
                configuration.retention(of: creation.system).keepsSnapshots
                ? String(RecordChecksum.snapshot(creation.id, 0, creation.state, version: creation.version)) : nil
            return .init(
                name: "create",
                parameters: [
                    creation.id, creation.system, String(Int64(bitPattern: creation.epoch)), creation.state,
                    String(creation.createdAt), String(RecordChecksum.creation(creation, generation: 0)), token,
                    String(replica), String(creation.version), kept,
                ]
            )
        case .event(let id, let revision, let event, let origin, let stamp):
            let crc = RecordChecksum.event(id, revision, origin.rawValue, event, stamp)
            return .init(
                name: "event",
                parameters: [
                    id, token, String(revision), String(origin.rawValue), event.description, String(crc),
                    String(stamp.version),
                    stamp.time.map(String.init), stamp.stateChecksum.map { String(Int64(bitPattern: $0)) },
                    stamp.feedback,
                ]
            )
        case .snapshot(let id, let revision, let state, let version):
            let crc = RecordChecksum.snapshot(id, revision, state, version: version)
            let system = configuration.systemRetention.isEmpty ? nil : self.state.withLock { $0.systems[id] }
            let (mode, amount): (String, Int64) =
                switch configuration.retention(of: system) {
                case .forever: ("forever", 0)
                case .events(let count): ("events", Int64(count))
                case .age(let milliseconds): ("age", milliseconds)
                case .snapshots(let count): ("snapshots", Int64(count))
                }
            return .init(
                name: "snapshot",
                parameters: [
                    id, token, String(revision), state, String(crc), String(version), mode, String(amount),
                    String(Int64(Date().timeIntervalSince1970 * 1000)),
                ]
            )
        case .removed(let id):
            answerCounts[id] = nil
            return .init(name: "remove", parameters: [id, token])
        case .answered(let answer):
            // Trimmed once the session has twice `answersPerSession` written (as far as this journal knows: it counts
            // from 0 when it takes a session, so at most three times that are kept), not at every answer: finding
            // where to cut reads that many rows.
            let keep = max(configuration.answersPerSession, 1)
            let count = answerCounts[answer.sessionID, default: 0] + 1
            let trim = count >= 2 * keep
            answerCounts[answer.sessionID] = trim ? keep : count
            return .init(
                name: "answer",
                parameters: [
                    answer.sessionID, token, answer.key, String(Int64(bitPattern: answer.fingerprint)),
                    String(Int64(bitPattern: answer.epoch)), String(answer.revision), answer.state,
                    String(RecordChecksum.answer(answer)), String(trim ? keep : 0),
                ]
            )
        case .deadline(let id, let at):
            return .init(name: "deadline", parameters: [id, token, at.map(String.init)])
        case .sequenced(let record):
            return .init(
                name: "client",
                parameters: [
                    record.sessionID, token, record.client, String(Int64(bitPattern: record.sequence)),
                    String(Int64(bitPattern: record.epoch)), String(record.revision), String(record.status),
                    record.answer, String(RecordChecksum.sequence(record)),
                ]
            )
        case .clientForgotten(let id, let client):
            return .init(name: "client.forget", parameters: [id, token, client])
        case .tokens(let id, let generation):
            return .init(
                name: "tokens",
                parameters: [
                    id, token, String(Int64(bitPattern: generation)),
                    String(RecordChecksum.tokens(id, generation)),
                ]
            )
        case .paused(let id, let paused):
            return .init(name: "pause", parameters: [id, token, paused ? "true" : "false"])
        case .settled(let id, _?):
            answerCounts[id] = nil  // let go: another replica may write its answers before it comes back
            return .init(name: "release", parameters: [id, token])
        case .settled(let id, nil):
            return .init(name: "owns", parameters: [id, token])
        }
    }

    static func sessionID(of record: JournalRecord) -> String {
        switch record {
        case .created(let creation): creation.id
        case .event(let id, _, _, _, _), .snapshot(let id, _, _, _), .removed(let id), .deadline(let id, _),
            .settled(let id, _), .tokens(let id, _), .clientForgotten(let id, _), .paused(let id, _):
            id
        case .answered(let answer): answer.sessionID
        case .sequenced(let record): record.sessionID
        }
    }
}
