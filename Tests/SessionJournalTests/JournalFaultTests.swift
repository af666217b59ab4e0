import CSQLiteFaults
import Dispatch
import Foundation
import Synchronization
import Testing

@testable import SessionJournal

/// The journal under storage faults injected through the fault VFS: a failed commit is sticky, nothing after it is
/// acknowledged, and the journal becomes healthy by itself once a test write succeeds. One process per directory.
/// Each test switches faults for its own directory.
@Suite(.serialized, .timeLimit(.minutes(1)))
struct JournalFaultTests {
    init() {
        #expect(fh_faults_register() == 0)
    }

    static let vfs = String(cString: fh_faults_vfs_name)

    static func open(_ directory: TemporaryDirectory) throws -> Journal {
        try JournalFixtures.open(
            directory,
            JournalConfiguration(compactionIntervalMilliseconds: 0, probeIntervalMilliseconds: 5, vfs: Self.vfs)
        )
    }

    /// Appends and waits; returns the error, nil on success.
    static func append(_ journal: Journal, _ records: [JournalRecord]) -> JournalError? {
        do {
            try journal.appendAndWait(records)
            return nil
        } catch {
            return error as? JournalError
        }
    }

    /// Waits (without timing assumptions: each wait is one health change) until the journal reports `health`.
    static func wait(_ journal: Journal, until health: @escaping @Sendable (JournalHealth) -> Bool) {
        let changed = DispatchSemaphore(value: 0)
        journal.onHealthChange { if health($0) { changed.signal() } }
        if health(journal.health) { return }
        changed.wait()
    }

    @Test(arguments: [FH_FAULT_WRITE, FH_FAULT_SYNC, FH_FAULT_FULL])
    func failedCommitIsStickyUntilATestWriteSucceeds(fault: fh_fault_mode) throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let id = JournalFixtures.id(1)
        let journal = try Self.open(directory)
        #expect(Self.append(journal, [.created(JournalFixtures.creation(id)), JournalFixtures.event(id, 1)]) == nil)

        fh_faults_set(directory.path, fault)
        let failed = try #require(Self.append(journal, [JournalFixtures.event(id, 2)]))
        #expect(failed.code == (fault == FH_FAULT_FULL ? .full : .sqlite))
        guard case .failing = journal.health else {
            Issue.record("a failed commit leaves the journal healthy")
            return
        }
        fh_faults_set(directory.path, FH_FAULT_NONE)
        Self.wait(journal) { $0 == .healthy }
        #expect(Self.append(journal, [JournalFixtures.event(id, 2)]) == nil)
        journal.close()

        let reopened = try Self.open(directory)
        defer { reopened.close() }
        #expect(try reopened.recover().sessions.first?.events.map(\.revision) == [1, 2])
    }

    @Test func appendsWhileFailingAreRefusedWithoutBeingTried() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let id = JournalFixtures.id(1)
        let journal = try JournalFixtures.open(
            directory,
            // No test writes: the journal stays failing.
            JournalConfiguration(compactionIntervalMilliseconds: 0, probeIntervalMilliseconds: 600_000, vfs: Self.vfs)
        )
        #expect(Self.append(journal, [.created(JournalFixtures.creation(id))]) == nil)
        fh_faults_set(directory.path, FH_FAULT_WRITE)
        #expect(Self.append(journal, [JournalFixtures.event(id, 1)]) != nil)
        fh_faults_set(directory.path, FH_FAULT_NONE)
        let injected = fh_faults_injected(directory.path)
        let refused = try #require(Self.append(journal, [JournalFixtures.event(id, 2)]))
        #expect(refused.code == .unavailable)
        #expect(fh_faults_injected(directory.path) == injected)
        journal.close()
        let reopened = try JournalFixtures.open(directory)
        defer { reopened.close() }
        #expect(try reopened.recover().sessions.first?.events.isEmpty == true)
    }

    @Test func healthChangesAreReportedInOrder() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let journal = try Self.open(directory)
        defer { journal.close() }
        let seen = Mutex<[String]>([])
        let healed = DispatchSemaphore(value: 0)
        journal.onHealthChange { health in
            seen.withLock { $0.append(health == .healthy ? "healthy" : "failing") }
            if health == .healthy { healed.signal() }
        }
        fh_faults_set(directory.path, FH_FAULT_FULL)
        #expect(Self.append(journal, [.created(JournalFixtures.creation(JournalFixtures.id(1)))])?.code == .full)
        fh_faults_set(directory.path, FH_FAULT_NONE)
        healed.wait()
        #expect(seen.withLock { $0 } == ["failing", "healthy"])
        #expect(journal.statistics.failedCommits == 1)
    }

    @Test func recoverOnlyReadsTheSessionsAskedFor() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let (a, b) = (JournalFixtures.id(1), JournalFixtures.id(2))
        let journal = try Self.open(directory)
        defer { journal.close() }
        #expect(
            Self.append(
                journal,
                [
                    .created(JournalFixtures.creation(a)), .created(JournalFixtures.creation(b)),
                    JournalFixtures.event(b, 1),
                ]
            ) == nil
        )
        let sessions = try journal.recover(only: [b])
        #expect(sessions.map(\.creation.id) == [b])
        #expect(sessions.first?.revision == 1)
    }

    /// A lock this process's own pid holds (a journal closed a moment ago whose lock a child being spawned still
    /// shares) is waited for, up to a second, instead of refused: here a descriptor of the test's own holds it for
    /// 100 ms, and the open that starts meanwhile succeeds once it is let go.
    @Test func aLockThisProcessLetsGoOfWithinASecondIsWaitedFor() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let held = Glibc.open(directory.file(DataDirectoryLock.fileName), O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
        #expect(held >= 0)
        #expect(flock(held, LOCK_EX | LOCK_NB) == 0)
        let pid = Array("\(getpid())\n".utf8)
        #expect(pwrite(held, pid, pid.count, 0) == pid.count)
        DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(100)) { Glibc.close(held) }
        // Refused at once before: the file names this process, and the lock is held when the open starts.
        let journal = try JournalFixtures.open(directory)
        #expect(Self.append(journal, [.created(JournalFixtures.creation(JournalFixtures.id(2)))]) == nil)
        journal.close()
    }

    @Test func secondJournalOnAHeldDirectoryIsRefusedNamingTheHolder() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let first = try JournalFixtures.open(directory)
        #expect {
            try JournalFixtures.open(directory).close()
        } throws: { error in
            guard let error = error as? JournalError else { return false }
            return error.code == .locked && error.message.contains("pid \(getpid())")
        }
        #expect(Self.append(first, [.created(JournalFixtures.creation(JournalFixtures.id(1)))]) == nil)
        // Exclusive locking keeps the WAL index in memory: no `-shm` mapping that could turn into a SIGBUS.
        #expect(!FileManager.default.fileExists(atPath: directory.file("journal.sqlite-shm")))
        first.close()
        // Closing releases it.
        try JournalFixtures.open(directory).close()
    }
}
