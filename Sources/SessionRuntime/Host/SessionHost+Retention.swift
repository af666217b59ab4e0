import CoreMetrics
import Dispatch
import Logging
import SessionJournal
import Synchronization
package import SystemKit

/// `session.retention`: a passive session nobody used for longer than the retention is deleted from the journal,
/// as a `DELETE` would. Active sessions (in memory), and passive ones with a durable timer still to come, stay.
extension SessionHost {
    /// Until the task that runs it is cancelled, with a journal and a retention: first gives every journaled
    /// session without a last-activity time one at now (sessions a crash left unsettled, or journaled by an older
    /// version), then every `retentionSweep(for:)` deletes the passive sessions that left memory more than the
    /// retention ago and have no deadline pending, a thousand at a time, oldest first.
    package func deleteAbandonedSessions(on wallClock: WallClock) async {
        guard let persistence, let retention = limits.retention else { return }
        let age = Int64(retention.components.seconds) * 1000 + retention.components.attoseconds / 1_000_000_000_000_000
        do throws(JournalError) {
            let stamped = try persistence.journal.stampActivity(at: wallClock.now().millisecondsSince1970)
            if stamped > 0 {
                persistence.logger.info(
                    "retention: sessions without a last-activity time count from now",
                    metadata: ["sessions": "\(stamped)"]
                )
            }
        } catch {
            persistence.logger.warning("retention: activity cannot be stamped", metadata: ["error": "\(error)"])
        }
        while !Task.isCancelled {
            var deleted = 0
            repeat {
                deleted = deleteAbandoned(now: wallClock.now().millisecondsSince1970, age: age, persistence)
            } while deleted == Self.retentionBatch && !Task.isCancelled
            do {
                try await Task.sleep(for: Self.retentionSweep(for: retention))
            } catch {
                return
            }
        }
    }

    /// Passive sessions deleted per look at the journal, at most.
    static let retentionBatch = 1000

    /// How often retention looks: a quarter of the retention, from a second to a minute.
    static func retentionSweep(for retention: Duration) -> Duration {
        min(max(retention / 4, .seconds(1)), .seconds(60))
    }

    /// Deletes the passive sessions that left memory more than `age` before `now` (milliseconds); returns how many
    /// candidates there were.
    private func deleteAbandoned(now: Int64, age: Int64, _ persistence: SessionPersistence) -> Int {
        let candidates: [String]
        do throws(JournalError) {
            candidates = try persistence.journal.abandonedSessions(before: now - age, limit: Self.retentionBatch)
        } catch {
            persistence.logger.warning("retention: sessions cannot be read", metadata: ["error": "\(error)"])
            return 0
        }
        guard !candidates.isEmpty, persistence.writeRefusal() == nil else { return 0 }
        // Under the activation lock: an activation of one of them reads the journal after its removal, so it finds
        // nothing (404), as after a DELETE. The journal deletes only those still passive (no replica took one
        // meanwhile) whose time is still past, in the transaction that deletes them.
        let active = activation.withLock { _ -> [String] in
            var active: [String] = []
            var passive: [String] = []
            for candidate in candidates {
                guard let id = SessionID(candidate) else { continue }
                if store[id] != nil { active.append(candidate) } else { passive.append(candidate) }
            }
            let retired: [String]
            do throws(JournalError) {
                retired = try persistence.journal.retire(passive, leftBefore: now - age)
            } catch {
                persistence.logger.warning("retention: sessions cannot be deleted", metadata: ["error": "\(error)"])
                return active
            }
            for id in retired.compactMap(SessionID.init) {
                if !persistence.forgetBroken(id) { metrics.sessionsPassive.decrement() }
                metrics.sessionsRetired.increment()
            }
            return active
        }
        // Active again: their time counts from now (and again from their next passivation), so they do not come
        // back at every look.
        if !active.isEmpty {
            do throws(JournalError) {
                try persistence.journal.touchActivity(of: active, at: now)
            } catch {
                persistence.logger.warning("retention: activity cannot be written", metadata: ["error": "\(error)"])
            }
        }
        return candidates.count
    }
}
