import FeedbackJSON
import Foundation
import SystemKit

/// The outbox kept in a file (optional): the store's client id, its numbers and the events not yet answered, written
/// after every change, so that an app that quits while offline sends them after its next start, each exactly once
/// (same client id, same numbers: the server answers a number it already took again instead of applying it twice).
extension RemoteStore {
    struct SavedQueue: Codable {
        struct Item: Codable {
            var sequence: UInt64
            var event: String
        }

        var session: String
        var clientID: String
        var acknowledged: UInt64
        var nextSequence: UInt64
        var pending: [Item]
        /// A post sent without an answer (`RemoteStore.unanswered`); absent in files of earlier versions.
        var unanswered: UInt64?
        /// The highest number answered (`RemoteStore.answered`); absent in files of earlier versions, which kept
        /// only `acknowledged`.
        var answered: UInt64?
        /// Events a stream event showed whose posts were not answered (`RemoteStore.shownUnanswered`).
        var shown: [Item]?
    }

    /// The queue saved in `file` for `session`, if there is one.
    static func savedQueue(_ file: URL?, session: String) -> SavedQueue? {
        guard let file, let data = try? Data(contentsOf: file),
            let saved = try? JSONDecoder().decode(SavedQueue.self, from: data), saved.session == session
        else { return nil }
        return saved
    }

    /// Takes the saved queue's events back (those that do not decode with this build's system are dropped).
    func restore(_ saved: SavedQueue) {
        acknowledged = saved.acknowledged
        nextSequence = saved.nextSequence
        unanswered = saved.unanswered
        answered = saved.answered ?? saved.acknowledged
        pending = Self.decoded(saved.pending)
        // Sent again but not predicted: the server's state showed them when they were saved.
        shownUnanswered = Self.decoded(saved.shown ?? [])
    }

    private static func decoded(_ items: [SavedQueue.Item]) -> [Pending] {
        items.compactMap { item in
            guard let value = try? JSONValue(parsing: Array(item.event.utf8)),
                let event = try? value.decode(System.Event.self)
            else { return nil }
            return Pending(sequence: item.sequence, event: event)
        }
    }

    private static func encoded(_ items: [Pending]) -> [SavedQueue.Item] {
        items.compactMap { item in
            (try? System.encodeEvent(item.event)).map {
                SavedQueue.Item(sequence: item.sequence, event: String(decoding: $0, as: UTF8.self))
            }
        }
    }

    /// Writes the queue to the file (atomically), when the store has one: to a sibling file first, then renamed over
    /// it, so a reader (the next start) finds the old queue or the new one, never half of one. Not `Data.write` with
    /// `.atomic`: on Linux that leaves a `TemporaryDirectory.*` in the temporary folder at every write.
    func persist() {
        guard let queueFile else { return }
        let saved = SavedQueue(
            session: session,
            clientID: clientID,
            acknowledged: acknowledged,
            nextSequence: nextSequence,
            pending: Self.encoded(pending),
            unanswered: unanswered,
            answered: answered,
            shown: Self.encoded(shownUnanswered)
        )
        guard let data = try? JSONEncoder().encode(saved) else { return }
        let partial = queueFile.deletingLastPathComponent()
            .appendingPathComponent(".\(queueFile.lastPathComponent).partial")
        do {
            try data.write(to: partial)
            if rename(partial.path, queueFile.path) != 0 { try FileManager.default.removeItem(at: partial) }
        } catch {
            try? FileManager.default.removeItem(at: partial)
        }
    }
}
