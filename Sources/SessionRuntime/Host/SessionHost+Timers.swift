import CoreMetrics
import Dispatch
import Logging
import SessionJournal
package import SystemKit

/// Durable timers of passive sessions: the journal indexes each session's next deadline (`JournalRecord.deadline`,
/// written by its recorder when the deadline changes); this wakes a session that left memory when its deadline
/// comes, so its timer fires on time and nobody has to ask for it.
extension SessionHost {
    /// Until the task that runs it is cancelled: sleeps until the earliest deadline of a session not in memory (at most
    /// a second; `nextLook`), then activates every passive session whose deadline has come, earliest first. An
    /// active session's own timer fires by itself and is left alone. A deadline that passed while the server was down
    /// is due at once. At most `session.wake.rate` sessions are woken a second (`WakeBudget`): the rest wait their turn, so
    /// many deadlines at once do not restart all their sessions' effects at once. The woken session's recorder
    /// measures its timer's lateness when it fires (`feedbackhost_timer_lateness_seconds`).
    package func wakeSessionsWithDueTimers(on wallClock: WallClock) async {
        guard let persistence else { return }
        var counted = DispatchTime(uptimeNanoseconds: 0)
        var budget = WakeBudget(rate: limits.wakeRate, now: DispatchTime.now().uptimeNanoseconds)
        while !Task.isCancelled {
            let now = wallClock.now().millisecondsSince1970
            var next: Int64?
            var throttled: UInt64 = 0
            var more = false
            do throws(JournalError) {
                var due: [SessionID] = []
                let entries = try persistence.journal.deadlines(through: now, limit: Self.wakeBatch)
                for entry in entries {
                    guard let id = SessionID(entry.sessionID), store[id] == nil else { continue }
                    guard budget.take(now: DispatchTime.now().uptimeNanoseconds) else {
                        throttled = budget.wait(now: DispatchTime.now().uptimeNanoseconds)
                        break
                    }
                    due.append(id)
                }
                // One journal read for the whole batch (settled sessions by their keys).
                activateForTimers(due)
                // A full batch that woke sessions: more may be due behind it; look again at once.
                if entries.count == Self.wakeBatch, !due.isEmpty, throttled == 0 { more = true }
                next = try nextLook(after: now)
                // A count of the index: every 10 s, not at every look (it reads the whole index on the writer queue).
                if DispatchTime.now().uptimeNanoseconds > counted.uptimeNanoseconds + 10_000_000_000 {
                    counted = DispatchTime.now()
                    metrics.timersPending.record(try persistence.journal.deadlineCount())
                }
            } catch {
                persistence.logger.warning("journal: due timers cannot be read", metadata: ["error": "\(error)"])
            }
            let wait = next.map { min(max($0 - wallClock.now().millisecondsSince1970, 0), 1000) } ?? 1000
            do {
                if more {
                    await Task.yield()
                    continue
                }
                if throttled > 0 {
                    try await Task.sleep(for: .nanoseconds(throttled))
                    continue
                }
                try await Task.sleep(for: .milliseconds(wait))
            } catch {
                return
            }
        }
    }

    /// Passive sessions woken per look at the index, at most.
    static let wakeBatch = 1000

    /// When to look at the index again: the earliest deadline after `now` of a session not in memory, or, when the
    /// next `lookAhead` deadlines are all of sessions in memory (whose own timers fire them), the last of those. Without
    /// it the waker looked at every deadline of every active session, two journal reads each time (about 800 looks a
    /// second with 1,875 timers a second; at 10,000 a second, about 15 % of a core). A session that leaves memory
    /// meanwhile with an earlier deadline waits until that look, as it waited before for the next deadline of any
    /// session (at most a second either way).
    private func nextLook(after now: Int64) throws(JournalError) -> Int64? {
        guard let persistence else { return nil }
        let upcoming = try persistence.journal.deadlines(after: now, limit: Self.lookAhead)
        let inMemory = { (entry: JournalDeadline) in SessionID(entry.sessionID).map { self.store[$0] != nil } ?? false }
        if let passive = upcoming.first(where: { !inMemory($0) }) { return passive.at }
        return upcoming.count == Self.lookAhead ? upcoming.last?.at : nil
    }

    /// Deadlines read per look for the next one of a session not in memory.
    static let lookAhead = 256
}
