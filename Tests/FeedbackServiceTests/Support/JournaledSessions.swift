import FeedbackJSON
import FeedbackLoop
import Foundation
import Logging
import SessionJournal
import SystemKit
import Upstream

@testable import FeedbackService

/// Writes journals of `VersionedCounter` sessions through the service's own path (a hosted session posting events,
/// its recorder appending them), for the migration and verification proofs.
enum JournaledSessions {
    struct NoUpstream: UpstreamFetching {
        struct Called: Error {}
        func fetch(_ request: UpstreamRequest) async throws -> UpstreamResponse { throw Called() }
    }

    static let quiet = Logger(label: "test") { _ in SwiftLogNoOpLogHandler() }

    static let environment = SessionEnvironment(
        system: SystemEnvironment(clock: TestClock(), upstream: NoUpstream(), logger: quiet)
    )

    /// A valid session id numbered `number`.
    static func id(_ number: Int) -> String {
        let digits = String(number)
        return String(repeating: "A", count: 21 - digits.count) + digits + "A"
    }

    /// The journal in `directory`, without background compaction and with the WAL synced by a timer (the proofs
    /// are about what is read back, not about power loss).
    static func open(_ directory: String, history: Int = 2) throws -> Journal {
        try Journal.open(
            directory: directory,
            configuration: JournalConfiguration(fsync: .interval(milliseconds: 1000), compactionIntervalMilliseconds: 0)
                .keepingHistory(history),
            logger: quiet
        )
    }

    /// The operations of `count` sessions: 1 to `maxOperations` each, drawn from `seed`.
    static func operations(count: Int, maxOperations: Int, seed: UInt64) -> [[VersionedCounter.Operation]] {
        var random = SplitMix(seed)
        return (0..<count).map { _ in
            (0..<Int(1 + random.next() % UInt64(maxOperations))).map { _ in
                switch random.next() % 5 {
                case 0: .decrement
                case 1, 2: .increment
                default: .add(Int(random.next() % 1000) - 500)
                }
            }
        }
    }

    /// Journals one session per element of `sessions` with `system` (whose events `event` makes), each posting its
    /// operations in up to three batches; every other one is passivated (settled), the rest only stopped. Returns
    /// once every record is durable.
    static func write<System: FeedbackSystem>(
        _ sessions: [[VersionedCounter.Operation]],
        system: System,
        event: (VersionedCounter.Operation) -> System.Event,
        into journal: Journal,
        snapshotInterval: Int,
        stateChecksums: Bool = true
    ) async throws {
        let persistence = SessionPersistence(
            journal: journal,
            snapshotInterval: snapshotInterval,
            logger: quiet,
            stateChecksums: stateChecksums
        )
        let hosted = HostedSystem(system)
        for (number, operations) in sessions.enumerated() {
            let session = try hosted.startSession(
                id: SessionID(id(number))!,
                epoch: 1,
                state: nil,
                inboxCapacity: 1000,
                environment: environment,
                persistence: persistence
            )
            let events = try operations.map { try JSONValue(encoding: event($0)) }
            let cut = events.count / 3
            for batch in [events[..<cut], events[cut..<(2 * cut)], events[(2 * cut)...]] where !batch.isEmpty {
                _ = try await session.post(Array(batch))
            }
            if number % 2 == 0 { session.passivate() } else { session.stop() }
        }
        // Appends complete in order: a last empty one completes after all of them.
        try await journal.append([])
    }
}

/// A small deterministic generator (SplitMix64), so that every run journals the same sessions.
struct SplitMix {
    private var state: UInt64
    init(_ seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
