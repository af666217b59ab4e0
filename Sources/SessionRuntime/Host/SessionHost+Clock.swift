import CoreMetrics
package import FeedbackJSON
import FeedbackLoop
import Foundation
import Logging
import SessionJournal
package import SystemKit

/// A server whose clock tests move (`--clock manual` or `skip`): what `GET /v1/clock` answers and what
/// `POST /v1/clock/advance` does (the API's `SessionService+Clock` has the routes). Without the option nothing here
/// runs.
extension SessionHost {
    /// How many deadlines one advance fires at most before it stops and says so: a timer that re-arms every
    /// millisecond would otherwise hold an advance by a year for hours.
    package static let maxClockSteps = 100_000
    /// The latest time an advance goes to: 9999-12-31T23:59:59.999Z.
    package static let latestClockTime: Int64 = 253_402_300_799_999

    /// What `GET /v1/clock` answers.
    package func clockState(_ clock: ServiceClock) -> JSONValue {
        let now = clock.now()
        return .object([
            "mode": .string(clock.mode.rawValue),
            "now": .int(now.millisecondsSince1970),
            "time": .string(Self.iso8601(now)),
            "sleepingTimers": .int(Int64(clock.clock.sleeperCount)),
            "busyEffects": .int(Int64(clock.clock.busyEffects)),
        ])
    }

    /// Where an advance goes: by a span from the time when its turn comes, or to a time.
    package enum ClockTarget: Sendable {
        case by(Duration)
        case to(WallTime)
    }

    /// Moves `clock` to `target`, one deadline at a time in deadline order (those of sleeping effects, and those
    /// the journal indexes for passive sessions, which it wakes), and after each step waits until the effects it
    /// resumed have settled (asleep again, or ended with their events reduced). Returns once the clock is at
    /// `target` and everything settled. Advances take turns: a span counts from the time when the turn comes, and a
    /// time the clock has passed meanwhile moves nothing.
    /// `save` writes the time to the data directory at the end (the skipping clock saves once a second instead).
    package func advanceClock(
        _ clock: ServiceClock,
        _ target: ClockTarget,
        save: Bool = true
    ) async throws(APIError) -> JSONValue {
        await clock.takeTurn()
        defer { clock.endTurn() }
        let from = clock.now()
        var end: TestClock.Instant
        switch target {
        case .by(let span): end = clock.clock.now.advanced(by: span)
        case .to(let time): end = clock.instant(at: time)
        }
        // RFC 3339 has four digits for the year: the clock stops at the end of the year 9999.
        end = min(end, clock.instant(at: WallTime(millisecondsSince1970: Self.latestClockTime)))
        var fired = 0
        var woken = 0
        var settled = await settle(clock)
        var steps = 0
        while true {
            let wokenNow = wakeDueSessions(clock)
            if wokenNow > 0 {
                woken += wokenNow
                settled = await settle(clock) && settled
            }
            let passive = nextPassiveDeadline(after: clock.now()).map(clock.instant(at:))
            guard let next = [clock.clock.nextDeadline, passive].compactMap({ $0 }).min(), next <= end else { break }
            steps += 1
            if steps > Self.maxClockSteps {
                if save { clock.save() }
                let now = clock.now()
                throw APIError(
                    .clockStepsExceeded,
                    "the span holds more than \(Self.maxClockSteps) deadlines; the clock stopped at "
                        + "\(now.millisecondsSince1970) (\(Self.iso8601(now))): advance in smaller steps",
                    extra: ["now": .int(now.millisecondsSince1970)]
                )
            }
            fired += clock.clock.move(to: next)
            settled = await settle(clock) && settled
        }
        clock.clock.move(to: end)
        if save { clock.save() }
        let now = clock.now()
        metrics.clockNow.record(Double(now.millisecondsSince1970) / 1000)
        return .object([
            "from": .int(from.millisecondsSince1970),
            "now": .int(now.millisecondsSince1970),
            "time": .string(Self.iso8601(now)),
            "timersFired": .int(Int64(fired)),
            "sessionsWoken": .int(Int64(woken)),
            "settled": .bool(settled),
            "busyEffects": .int(Int64(clock.clock.busyEffects)),
        ])
    }

    /// Until the task is cancelled: whenever every effect is asleep on the clock (or none runs), moves it to the
    /// next deadline (`--clock skip`). Looks again every 10 ms of real time when there is none. Saves the time at
    /// most once a second (and `ServiceApplication.shutdown` at the end), not at every skip.
    package func skipClock(_ clock: ServiceClock) async {
        var saved = ContinuousClock.now
        defer { clock.save() }
        while !Task.isCancelled {
            if ContinuousClock.now - saved > .seconds(1) {
                clock.save()
                saved = ContinuousClock.now
            }
            guard await clock.clock.settled() else { return }
            let passive = nextPassiveDeadline(after: clock.now()).map(clock.instant(at:))
            let next = [clock.clock.nextDeadline, passive].compactMap { $0 }.min()
            if let next, !clock.isAdvancing {
                // Wall times are whole milliseconds: round a deadline between two up, so that it is reached.
                var target = clock.time(at: next)
                if clock.instant(at: target) < next { target = target.advanced(by: .milliseconds(1)) }
                _ = try? await advanceClock(clock, .to(target), save: false)
                await Task.yield()
                continue
            }
            do {
                try await Task.sleep(for: .milliseconds(10))
            } catch {
                return
            }
        }
    }

    /// Waits until every effect is asleep on the clock or ended, at most `clock.settle.ms` of real time; false
    /// when that ran out first.
    private func settle(_ clock: ServiceClock) async -> Bool {
        let limit = clock.settleLimit
        let manual = clock.clock
        let settled = await withTaskGroup(of: Bool.self) { group in
            group.addTask { await manual.settled() }
            group.addTask {
                try? await Task.sleep(for: limit)
                return false
            }
            let first = await group.next() ?? false
            group.cancelAll()
            return first
        }
        if !settled {
            clock.logger.warning(
                "clock advance: effects still under way after clock.settle.ms; moving on",
                metadata: ["effects": "\(manual.busyEffects)"]
            )
        }
        return settled
    }

    /// Activates the passive sessions whose journaled deadline has come; returns how many.
    private func wakeDueSessions(_ clock: ServiceClock) -> Int {
        guard let persistence else { return 0 }
        var woken = 0
        do throws(JournalError) {
            let now = clock.now().millisecondsSince1970
            for entry in try persistence.journal.deadlines(through: now, limit: Self.wakeBatch) {
                guard let id = SessionID(entry.sessionID), store[id] == nil else { continue }
                if (try? activeSession(id, forTimer: true)) != nil { woken += 1 }
            }
        } catch {
            persistence.logger.warning("journal: due timers cannot be read", metadata: ["error": "\(error)"])
        }
        return woken
    }

    /// The earliest journaled deadline after `time`, nil without a journal or when there is none.
    private func nextPassiveDeadline(after time: WallTime) -> WallTime? {
        guard let persistence else { return nil }
        let next = try? persistence.journal.deadline(after: time.millisecondsSince1970)
        return next.flatMap { $0 }.map(WallTime.init(millisecondsSince1970:))
    }

    /// `2026-11-26T09:00:00.000Z`.
    package static func iso8601(_ time: WallTime) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return formatter.string(from: Date(timeIntervalSince1970: Double(time.millisecondsSince1970) / 1000))
    }
}
