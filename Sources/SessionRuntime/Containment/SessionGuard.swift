import CoreMetrics
import Dispatch
public import FeedbackLoop
package import Logging
package import SessionJournal
import Synchronization

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// One session's containment: the supervisor of its loop's feedback budget, the judge of its reduces' time, and what
/// the API reports of both (`GET /v1/sessions/{id}/containment`).
///
/// Concurrency: a `Mutex` guards what it reports and the loop's controls. The loop calls `feedbacksThrottled` and
/// `feedbacksStopped` on its engine owner's thread, and `reduced` from inside a reduce, under the loop's lock: so
/// nothing here calls back into the loop synchronously (an offload is dispatched).
public final class SessionGuard: LoopSupervising, StepMarking, @unchecked Sendable {
    /// What a client and an admin see of the containment.
    package struct Report: Sendable, Equatable {
        /// `running`, `stopped` (a runaway, until an admin resumes them) or `paused` (a fork's, until an admin resumes
        /// its effects).
        package var feedbacks = "running"
        /// The feedback that sent the most when they were last throttled or stopped.
        package var loudestFeedback: String?
        /// When they last began to wait for their budget, in seconds since 1970.
        package var throttledAt: Double?
        /// When they were stopped, in seconds since 1970.
        package var stoppedAt: Double?
        /// Reduces that took longer than the policy's limit since the session came into memory.
        package var slowReduces = 0
        /// The slowest of them: its event and milliseconds.
        package var slowestReduce: SlowReduce?
        /// True once the session's steps run on the slow lane.
        package var offloaded = false

        /// A report of nothing contained.
        package init() {}

        /// A reduce over the limit: the event's case and how long it took.
        package struct SlowReduce: Sendable, Equatable {
            package var event: String
            package var milliseconds: Double
        }
    }

    /// What the guard may do to its loop, given once the loop exists (made where the system's types are concrete).
    package struct Controls: Sendable {
        package var name: @Sendable (Int) -> String
        package var offload: @Sendable (SlowLane) -> Void
        package var resume: @Sendable () -> Void

        package init(
            name: @escaping @Sendable (Int) -> String,
            offload: @escaping @Sendable (SlowLane) -> Void,
            resume: @escaping @Sendable () -> Void
        ) {
            self.name = name
            self.offload = offload
            self.resume = resume
        }
    }

    private struct Held {
        var report = Report()
        var controls: Controls?
    }

    package let session: String
    package let policy: ContainmentPolicy
    /// Where each thread notes that it runs this session's code; `.disabled` without a data directory.
    package let marks: CrashMarks
    private let metrics: ContainmentMetrics?
    private let logger: Logger
    private let slowLane: SlowLane
    private let slowNanoseconds: Int64
    private let held = Mutex(Held())
    /// `report.offloaded`, for the post path without the lock.
    private let offloadedFlag = Atomic<Bool>(false)

    package init(
        session: String,
        policy: ContainmentPolicy,
        metrics: ContainmentMetrics?,
        logger: Logger,
        slowLane: SlowLane,
        marks: CrashMarks = .disabled
    ) {
        self.marks = marks
        self.session = session
        self.policy = policy
        self.metrics = metrics
        self.logger = logger
        self.slowLane = slowLane
        let (seconds, attoseconds) = policy.slowReduce.components
        slowNanoseconds = seconds * 1_000_000_000 + attoseconds / 1_000_000_000
    }

    /// A step of the session begins: the thread notes the session and the revision its event makes (a few stores).
    public func stepStarted(revision: UInt64) {
        marks.enter(session: session, kind: .reduce, revision: revision)
    }

    /// The step's reduce and feedbacks are done.
    public func stepEnded() {
        marks.leave()
    }

    /// An event's case, for a log line: its description up to the first parenthesis. Only for slow reduces.
    @usableFromInline
    package static func describe<Event>(_ event: Event) -> String {
        let text = String(describing: event)
        return String(text.prefix { $0 != "(" }.prefix(48))
    }

    /// True once the session's steps run on the slow lane.
    package var isOffloaded: Bool { offloadedFlag.load(ordering: .acquiring) }

    /// Runs `body` on the slow lane (an offloaded session's post: its trial reduce there too).
    package func onSlowLane(_ body: @escaping @Sendable () -> Void) {
        slowLane.run(body)
    }

    /// Gives the guard its loop's controls; called once, right after the loop started.
    package func bind(_ controls: Controls) {
        held.withLock { $0.controls = controls }
    }

    package var report: Report { held.withLock { $0.report } }

    /// Whether a reduce of `nanoseconds` is slow: the timed reducer asks before it describes the event.
    @inline(__always)
    @usableFromInline
    package func isSlow(_ nanoseconds: Int64) -> Bool { nanoseconds > slowNanoseconds }

    /// A reduce took longer than the limit: it is logged with the session, the event and the time, and counted; the
    /// `slowReducesBeforeOffload`-th moves the session's steps to the slow lane. Called inside the reduce's critical
    /// section: the offload is dispatched, never done here.
    @usableFromInline
    package func reducedSlowly(nanoseconds: Int64, event: String) {
        let milliseconds = Double(nanoseconds) / 1e6
        let (count, offload) = held.withLock { held -> (Int, Controls?) in
            held.report.slowReduces += 1
            if held.report.slowestReduce.map({ milliseconds > $0.milliseconds }) ?? true {
                held.report.slowestReduce = Report.SlowReduce(event: event, milliseconds: milliseconds)
            }
            guard !held.report.offloaded, held.report.slowReduces >= policy.slowReducesBeforeOffload else {
                return (held.report.slowReduces, nil)
            }
            held.report.offloaded = true
            offloadedFlag.store(true, ordering: .releasing)
            return (held.report.slowReduces, held.controls)
        }
        metrics?.slowReduces.increment()
        logger.warning(
            "a reduce took longer than \(policy.slowReduce)",
            metadata: [
                "session": "\(session)", "event": "\(event)",
                "duration_ms": "\(Int(milliseconds.rounded()))", "slow_reduces": "\(count)",
            ]
        )
        guard let offload else { return }
        metrics?.offloaded.increment()
        logger.warning(
            "the session's reduces keep taking too long: its steps now run on the slow lane, off the server's threads",
            metadata: ["session": "\(session)", "slow_reduces": "\(count)"]
        )
        let lane = slowLane
        DispatchQueue.global().async { offload.offload(lane) }
    }

    public func feedbacksThrottled(feedback: Int) {
        let name = held.withLock { held -> String in
            let name = held.controls?.name(feedback) ?? "feedback \(feedback + 1)"
            held.report.throttledAt = Date().timeIntervalSince1970
            held.report.loudestFeedback = name
            return name
        }
        metrics?.throttled.increment()
        logger.info(
            "the session's feedbacks send more events than their budget allows: they wait for it",
            metadata: ["session": "\(session)", "feedback": "\(name)"]
        )
    }

    public func feedbacksStopped(feedback: Int) {
        let name = held.withLock { held -> String in
            let name = held.controls?.name(feedback) ?? "feedback \(feedback + 1)"
            held.report.feedbacks = "stopped"
            held.report.loudestFeedback = name
            held.report.stoppedAt = Date().timeIntervalSince1970
            return name
        }
        metrics?.stopped.increment()
        logger.warning(
            Logger.Message(
                stringLiteral: "the session's feedbacks stayed over their budget: they are stopped (a runaway); "
                    + "clients can still read and post, and an admin can resume them"
            ),
            metadata: ["session": "\(session)", "feedback": "\(name)"]
        )
    }

    /// What `resume()` started again.
    public enum Resumed: Sendable, Equatable {
        /// A runaway's feedbacks, stopped by their budget.
        case runaway
        /// A fork's effects, paused from its start.
        case pause
    }

    /// Marks the feedbacks paused before the loop starts them stopped (a fork's): the same stop as a runaway's, which
    /// `resume()` ends the same way.
    package func pause() {
        held.withLock { $0.report.feedbacks = "paused" }
    }

    /// Starts stopped or paused feedbacks again (`Loop.resumeFeedbacks()`): what they were, nil when they ran.
    /// `restarting` runs first, once the report says running and before the loop is told (a fork's session journals
    /// the end of its pause there, so it is appended before anything its feedbacks then send).
    @discardableResult
    package func resume(restarting: (Resumed) -> Void = { _ in }) -> Resumed? {
        let resumed = held.withLock { held -> (Resumed, Controls?)? in
            let resumed: Resumed
            switch held.report.feedbacks {
            case "stopped": resumed = .runaway
            case "paused": resumed = .pause
            default: return nil
            }
            held.report.feedbacks = "running"
            held.report.stoppedAt = nil
            return (resumed, held.controls)
        }
        guard let (what, controls) = resumed else { return nil }
        restarting(what)
        metrics?.resumed.increment()
        controls?.resume()
        return what
    }
}
