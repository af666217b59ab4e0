import FeedbackJSON
import Foundation
import SessionJournal
import SystemKit
import Testing

@testable import FeedbackService

/// `verify` replays a journal through a build: an untouched journal is identical; a build whose reducer changed for
/// one event type diverges in exactly the sessions that saw that event, each at that event's revision.
@Suite(.timeLimit(.minutes(5)))
struct JournalVerifierTests {
    typealias V2 = VersionedCounter.V2

    /// A journal of `count` version 2 sessions, all of their events kept (snapshots every 5 revisions).
    private func journal(
        _ directory: TemporaryDataDirectory,
        count: Int
    ) async throws -> [[VersionedCounter.Operation]] {
        let sessions = JournaledSessions.operations(count: count, maxOperations: 30, seed: 6902)
        let journal = try JournaledSessions.open(directory.path, history: 1000)
        defer { journal.close() }
        try await JournaledSessions.write(
            sessions,
            system: V2(),
            event: V2.Event.init,
            into: journal,
            snapshotInterval: 5
        )
        return sessions
    }

    @Test func anUntouchedJournalIsIdenticalAndAChangedReducerDivergesExactlyWhereItsEventWas() async throws {
        let directory = TemporaryDataDirectory()
        defer { directory.remove() }
        let sessions = try await journal(directory, count: 2000)
        let journal = try JournaledSessions.open(directory.path, history: 1000)
        defer { journal.close() }

        let same = try JournalVerifier(systems: [HostedSystem(V2())]).verify(journal)
        #expect(same.total.identical == sessions.count, "\(same.lines.prefix(3))")
        #expect(same.total.events == sessions.reduce(0) { $0 + $1.count })

        let changed = try JournalVerifier(systems: [HostedSystem(VersionedCounter.DecrementsTwice())])
            .verify(journal, keep: sessions.count)
        var expected: [String: UInt64] = [:]
        for (number, operations) in sessions.enumerated() {
            if let first = operations.firstIndex(of: .decrement) {
                expected[JournaledSessions.id(number)] = UInt64(first + 1)
            }
        }
        #expect(!expected.isEmpty && expected.count < sessions.count)
        let found = Dictionary(
            uniqueKeysWithValues: changed.problems.map { ($0.session, $0.divergence?.revision ?? 0) }
        )
        #expect(found == expected)
        #expect(changed.total.diverged == expected.count)
        #expect(changed.total.identical == sessions.count - expected.count)
        // Where a kept snapshot follows, the patch turns the journaled state into the replayed one.
        for verdict in changed.problems {
            guard let divergence = verdict.divergence, let patch = divergence.patch else { continue }
            #expect(divergence.comparedAt! >= divergence.revision)
            #expect(patch.operations.count == 1)
        }
        #expect(changed.problems.contains { $0.divergence?.patch != nil })
    }

    @Test func withoutStateChecksumsADivergenceIsFoundAtTheNextKeptSnapshot() async throws {
        let directory = TemporaryDataDirectory()
        defer { directory.remove() }
        let sessions = JournaledSessions.operations(count: 500, maxOperations: 30, seed: 7)
        do {
            let journal = try JournaledSessions.open(directory.path, history: 1000)
            defer { journal.close() }
            try await JournaledSessions.write(
                sessions,
                system: V2(),
                event: V2.Event.init,
                into: journal,
                snapshotInterval: 5,
                stateChecksums: false
            )
        }
        let journal = try JournaledSessions.open(directory.path, history: 1000)
        defer { journal.close() }
        #expect(try JournalVerifier(systems: [HostedSystem(V2())]).verify(journal).total.identical == sessions.count)
        let changed = try JournalVerifier(systems: [HostedSystem(VersionedCounter.DecrementsTwice())])
            .verify(journal, keep: sessions.count)
        // Kept snapshots: every fifth revision, and the last one of a passivated (even-numbered) session.
        var expected: [String: UInt64] = [:]
        for (number, operations) in sessions.enumerated() {
            guard let first = operations.firstIndex(of: .decrement).map({ UInt64($0 + 1) }) else { continue }
            let last = UInt64(operations.count)
            let kept = (first...last).first { $0 % 5 == 0 || (number % 2 == 0 && $0 == last) }
            if let kept { expected[JournaledSessions.id(number)] = kept }
        }
        let found = Dictionary(
            uniqueKeysWithValues: changed.problems.map { ($0.session, $0.divergence?.revision ?? 0) }
        )
        #expect(found == expected)
        #expect(changed.problems.allSatisfy { $0.divergence?.patch != nil })
    }

    @Test func aSampleReplaysAboutThatManySessions() async throws {
        let directory = TemporaryDataDirectory()
        defer { directory.remove() }
        _ = try await journal(directory, count: 500)
        let journal = try JournaledSessions.open(directory.path, history: 1000)
        defer { journal.close() }
        let report = try JournalVerifier(systems: [HostedSystem(V2())]).verify(journal, sample: 50)
        #expect(report.total.sessions == 50)
        #expect(report.sessionsInJournal == 500)
    }

    @Test func aSessionOfASystemThisBuildDoesNotServeFails() async throws {
        let directory = TemporaryDataDirectory()
        defer { directory.remove() }
        _ = try await journal(directory, count: 3)
        let journal = try JournaledSessions.open(directory.path, history: 1000)
        defer { journal.close() }
        let report = try JournalVerifier(systems: []).verify(journal)
        #expect(report.total.failed == 3)
        #expect(report.problems.first?.failure?.contains("\"counter\" is not served") == true)
    }
}
