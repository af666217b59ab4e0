import Dispatch
import Foundation
public import SessionJournal
public import SessionRuntime
import Synchronization

/// `feedback-host verify` and `--verify-on-start`: replays every journaled session (or a sample) through this
/// build's systems and reports, per session, whether the build reproduces what the journal holds.
///
/// Concurrency: `verify` reads the journal in batches on the calling thread (through `SessionHistoryReading`) and
/// replays each batch on every core (`DispatchQueue.concurrentPerform`); `progress` is called on the calling thread
/// between batches. The verifier itself holds nothing mutable.
public struct JournalVerifier: Sendable {
    private let systems: [String: HostedSystem]

    /// A verifier of the sessions of `systems`.
    public init(systems: [HostedSystem]) {
        self.systems = Dictionary(systems.map { ($0.name, $0) }) { first, _ in first }
    }

    /// Replays the sessions of `journal`: every one, or about `sample` of them (every k-th in id order). Verdicts of
    /// diverged and failed sessions are kept (at most `keep` of them); every session is counted.
    public func verify(
        _ journal: any SessionHistoryReading,
        sample: Int? = nil,
        keep: Int = 1000,
        batchSize: Int = 2000,
        progress: (VerificationReport) -> Void = { _ in }
    ) throws(JournalError) -> VerificationReport {
        let total = try journal.sessionCount()
        let stride = sample.map { $0 > 0 ? max(1, total / $0) : Int.max } ?? 1
        var report = VerificationReport(sessionsInJournal: total)
        var index = 0
        try journal.readHistories(batchSize: batchSize) { batch in
            var chosen: [SessionHistory] = []
            chosen.reserveCapacity(batch.count)
            for history in batch {
                if index % stride == 0, sample != 0 { chosen.append(history) }
                index += 1
            }
            let verdicts = replay(chosen)
            for verdict in verdicts { report.add(verdict, keep: keep) }
            progress(report)
        }
        return report
    }

    /// The verdicts of `histories`, in order, replayed on every core.
    func replay(_ histories: [SessionHistory]) -> [SessionVerdict] {
        guard !histories.isEmpty else { return [] }
        let results = Mutex<[SessionVerdict?]>(Array(repeating: nil, count: histories.count))
        let workers = min(max(ProcessInfo.processInfo.activeProcessorCount, 1), histories.count)
        DispatchQueue.concurrentPerform(iterations: workers) { worker in
            var mine: [(Int, SessionVerdict)] = []
            for position in Swift.stride(from: worker, to: histories.count, by: workers) {
                mine.append((position, verdict(histories[position])))
            }
            results.withLock { results in for (position, verdict) in mine { results[position] = verdict } }
        }
        return results.withLock { $0.map { $0! } }
    }

    /// One session's verdict: failed when its system is not served by this build.
    func verdict(_ history: SessionHistory) -> SessionVerdict {
        guard let system = systems[history.creation.system] else {
            return SessionVerdict(
                session: history.creation.id,
                system: history.creation.system,
                outcome: .failed,
                events: 0,
                failure: "its system \"\(history.creation.system)\" is not served by this build"
            )
        }
        return SessionReplay.verify(history, of: system.system)
    }
}
