import Dispatch
import Foundation
import PostgresFixture
import Synchronization
import Testing

@testable import SessionJournal
@testable import SessionJournalPostgres

/// One owner per session in a shared journal: two `PostgresJournal`s on one database stand for two replicas. Reading a
/// session back takes it; the previous owner's appends are then refused (`.fenced`) and write nothing, while what
/// they shared a commit with is written.
@Suite(.timeLimit(.minutes(2))) struct JournalFencingTests {
    @Test func aSupersededOwnersAppendIsRefusedAndWritesNothing() throws {
        let place = try JournalPlace(.postgres)
        let (a, b) = (JournalFixtures.id(1), JournalFixtures.id(2))
        let first = try place.open()
        defer { first.close() }
        let second = try place.open()
        defer { second.close() }
        try first.appendAndWait([.created(JournalFixtures.creation(a)), JournalFixtures.event(a, 1)])
        try first.appendAndWait([.created(JournalFixtures.creation(b))])

        // The second replica activates `a`: it reads everything the first committed and owns it from then on.
        let taken = try #require(try second.recover(only: [a]).first)
        #expect(taken.revision == 1)

        // In one group commit of the first replica: `a`'s append is refused, `b`'s is written.
        let release = DispatchSemaphore(value: 0)
        place.hold(first, until: release)
        let outcomes = Mutex<[String: Result<Void, JournalError>]>([:])
        let done = DispatchGroup()
        for (id, revision) in [(a, UInt64(2)), (b, UInt64(1))] {
            done.enter()
            first.append([JournalFixtures.event(id, revision)]) { result in
                outcomes.withLock { $0[id] = result }
                done.leave()
            }
        }
        release.signal()
        done.wait()
        let results = outcomes.withLock { $0 }
        #expect(results[a]?.failure?.code == .fenced)
        #expect(results[b]?.failure == nil)
        #expect(first.health == .healthy)

        // The new owner appends revision 2 itself; the old owner's revision 2 never reached the log.
        try second.appendAndWait([JournalFixtures.event(a, 2, origin: .effect)])
        let third = try place.open()
        defer { third.close() }
        let sessions = try third.recover().sessions
        #expect(sessions.map(\.revision) == [2, 1])
        #expect(sessions[0].events.last?.origin == .effect)

        // Once superseded, always: the first replica's later appends of `a` are refused too.
        #expect(throws: JournalError.self) { try first.appendAndWait([JournalFixtures.event(a, 3)]) }
    }

    /// Ownership checks (what a read of a copy in memory asks first) that wait together go to the database as one
    /// query, and each gets its own session's answer: owned where this replica still is the owner, not where another
    /// took the session or this one never held it.
    @Test func ownershipChecksWaitingTogetherAreEachAnsweredForTheirSession() throws {
        let place = try JournalPlace(.postgres)
        let ids = (1...40).map(JournalFixtures.id)
        let first = try place.open()
        defer { first.close() }
        let second = try place.open()
        defer { second.close() }
        try first.appendAndWait(ids.map { .created(JournalFixtures.creation($0)) })
        let taken = Set(ids.enumerated().filter { $0.offset % 3 == 0 }.map(\.element))
        #expect(try second.recover(only: taken).count == taken.count)

        let release = DispatchSemaphore(value: 0)
        place.hold(first, until: release)
        let answers = Mutex<[String: Result<Bool, JournalError>]>([:])
        let done = DispatchGroup()
        for id in ids + [JournalFixtures.id(99)] {
            done.enter()
            first.confirmOwnership(of: id) { result in
                answers.withLock { $0[id] = result }
                done.leave()
            }
        }
        release.signal()
        #expect(done.wait(timeout: .now() + 20) == .success)
        let results = answers.withLock { $0 }
        for id in ids { #expect(try results[id]?.get() == !taken.contains(id), "\(id)") }
        #expect(try results[JournalFixtures.id(99)]?.get() == false)
        for id in taken { #expect(try second.confirmsOwnership(of: id)) }
    }

    /// A replica that stalls (SIGSTOP, a long pause) with appends queued wakes after another took its session: every
    /// append it makes then is refused, so nothing it applied while superseded reaches the log.
    @Test func aPausedOwnerWakesFencedAndTheNewOwnersHistoryStands() throws {
        let place = try JournalPlace(.postgres)
        let id = JournalFixtures.id(1)
        let paused = try place.open()
        defer { paused.close() }
        try paused.appendAndWait(
            [.created(JournalFixtures.creation(id))] + (1...3).map { JournalFixtures.event(id, $0) }
        )

        let release = DispatchSemaphore(value: 0)
        place.hold(paused, until: release)  // stalled: its queued appends are not sent
        let refused = Mutex(0)
        let done = DispatchGroup()
        for revision in UInt64(4)...6 {
            done.enter()
            paused.append([JournalFixtures.event(id, revision)]) { result in
                if result.failure?.code == .fenced { refused.withLock { $0 += 1 } }
                done.leave()
            }
        }

        let other = try place.open()
        defer { other.close() }
        #expect(try other.recover(only: [id]).first?.revision == 3)
        try other.appendAndWait([JournalFixtures.event(id, 4, origin: .effect)])

        release.signal()  // wakes
        done.wait()
        #expect(refused.withLock { $0 } == 3)
        let after = try #require(try other.recover(only: [id]).first)
        #expect(after.events.map(\.revision) == [1, 2, 3, 4])
        #expect(after.events.last?.origin == .effect)
    }

    /// A passivation lets the session go: a due timer may then wake it on any replica, and only a passive session is
    /// offered for waking, or counts for when to look next.
    @Test func aPassivatedSessionIsOfferedToEveryReplicaForItsTimer() throws {
        let place = try JournalPlace(.postgres)
        let (held, passive) = (JournalFixtures.id(1), JournalFixtures.id(2))
        let first = try place.open()
        defer { first.close() }
        try first.appendAndWait([
            .created(JournalFixtures.creation(held)), .deadline(sessionID: held, at: 10),
            .created(JournalFixtures.creation(passive)), .deadline(sessionID: passive, at: 20),
        ])
        try first.appendAndWait([
            .snapshot(sessionID: passive, revision: 0, state: "{}"), .settled(sessionID: passive, revision: 0),
        ])
        let second = try place.open()
        defer { second.close() }
        #expect(try second.deadlines(through: 100, limit: 10).map(\.sessionID) == [passive])
        // The next deadline to wake for is the passive one's: the held session's timer fires in its holder's memory.
        #expect(try second.deadline(after: 0) == 20)
        // Woken on the second replica: it owns it now, and it is no longer offered.
        #expect(try second.recover(only: [passive]).count == 1)
        #expect(try second.deadlines(through: 100, limit: 10).isEmpty)
        #expect(try second.deadline(after: 0) == nil)
        try second.appendAndWait([.settled(sessionID: passive, revision: nil), JournalFixtures.event(passive, 1)])
    }

    /// A replica that stops renewing its lease (killed, or stalled as here) leaves the due timers of the sessions it
    /// holds to the others; while it renews, they are its own.
    @Test func aHeldSessionsTimerIsOfferedOnceItsHoldersLeaseLapses() throws {
        let place = try JournalPlace(.postgres)
        let id = JournalFixtures.id(1)
        let holder = try PostgresJournal.open(url: place.url!, leaseMilliseconds: 3000, logger: JournalFixtures.logger)
        defer { holder.close() }
        let other = try PostgresJournal.open(url: place.url!, leaseMilliseconds: 3000, logger: JournalFixtures.logger)
        defer { other.close() }
        try holder.appendAndWait([.created(JournalFixtures.creation(id)), .deadline(sessionID: id, at: 10)])
        #expect(try other.deadlines(through: 100, limit: 10).isEmpty)

        let release = DispatchSemaphore(value: 0)
        place.hold(holder, until: release)  // stalled: no renewal
        var offered: [JournalDeadline] = []
        for _ in 0..<100 where offered.isEmpty {
            offered = try other.deadlines(through: 100, limit: 10)
            if offered.isEmpty { usleep(100_000) }
        }
        #expect(offered == [JournalDeadline(sessionID: id, at: 10)])
        #expect(try other.recover(only: [id]).count == 1)
        release.signal()
        #expect(throws: JournalError.self) { try holder.appendAndWait([.deadline(sessionID: id, at: nil)]) }
    }
}

/// The PostgreSQL journal when its connection breaks (the server ended it) and cannot be opened again for a while:
/// the commit finds it gone and fails, the journal is `failing` and refuses appends, its test writes reconnect once the
/// database takes connections again, and commits work again with nothing acknowledged lost.
@Suite(.timeLimit(.minutes(2))) struct PostgresConnectionLossTests {
    @Test func aBrokenConnectionFailsTheJournalUntilATestWriteReconnects() throws {
        let place = try JournalPlace(.postgres)
        let id = JournalFixtures.id(1)
        let journal = try place.open(JournalConfiguration(probeIntervalMilliseconds: 20))
        defer { journal.close() }
        try journal.appendAndWait([.created(JournalFixtures.creation(id)), JournalFixtures.event(id, 1)])

        let server = try PostgresServer.shared()
        let url = place.url!
        let database = String(url.split(separator: "/").last!)
        let maintenance = String(url.dropLast(database.count)) + "postgres"
        _ = try server.psql(maintenance, "ALTER DATABASE \(database) ALLOW_CONNECTIONS false")
        _ = try server.psql(
            maintenance,
            "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE datname = '\(database)'"
        )
        #expect(throws: JournalError.self) { try journal.appendAndWait([JournalFixtures.event(id, 2)]) }
        guard case .failing = journal.health else {
            Issue.record("the journal should be failing, not \(journal.health)")
            return
        }
        #expect(throws: JournalError.self) { try journal.appendAndWait([JournalFixtures.event(id, 2)]) }

        _ = try server.psql(maintenance, "ALTER DATABASE \(database) ALLOW_CONNECTIONS true")
        var healthy = false
        for _ in 0..<250 where !healthy {
            healthy = journal.health == .healthy
            if !healthy { usleep(20_000) }
        }
        #expect(healthy)
        try journal.appendAndWait([JournalFixtures.event(id, 2)])
        let session = try #require(try journal.recover(only: [id]).first)
        #expect(session.events.map(\.revision) == [1, 2])
    }

    /// A server that stops answering (its backend stopped here; a dropped network looks the same) fails the commit
    /// waiting on it after `answerTimeoutMilliseconds` instead of holding the journal for good; once the server answers
    /// again a test write reconnects, and commits work again.
    @Test func aServerThatStopsAnsweringFailsTheCommitAfterTheAnswerTimeout() throws {
        let place = try JournalPlace(.postgres)
        let id = JournalFixtures.id(1)
        var configuration = JournalConfiguration(probeIntervalMilliseconds: 20)
        configuration.answerTimeoutMilliseconds = 1000
        let journal = try place.open(configuration)
        defer { journal.close() }
        try journal.appendAndWait([.created(JournalFixtures.creation(id)), JournalFixtures.event(id, 1)])

        let server = try PostgresServer.shared()
        let url = place.url!
        let database = String(url.split(separator: "/").last!)
        let backends = try server.psql(
            url,
            "SELECT pid FROM pg_stat_activity WHERE datname = '\(database)' AND application_name = 'feedback-host'"
        ).split(separator: "\n").compactMap { Int32($0) }
        try #require(backends.count == 1)
        kill(backends[0], SIGSTOP)
        let stopped = #expect(throws: JournalError.self) { try journal.appendAndWait([JournalFixtures.event(id, 2)]) }
        kill(backends[0], SIGCONT)
        #expect(stopped?.message.contains("PostgreSQL did not answer") == true, "\(String(describing: stopped))")

        var healthy = false
        for _ in 0..<500 where !healthy {
            healthy = journal.health == .healthy
            if !healthy { usleep(20_000) }
        }
        #expect(healthy)
        // The stalled commit's outcome is unknown to the journal: the stopped backend may run it once it goes on.
        let before = try #require(try journal.recover(only: [id]).first).events.map(\.revision)
        #expect(before == [1] || before == [1, 2])
        let next = UInt64(before.count + 1)
        try journal.appendAndWait([JournalFixtures.event(id, next)])
        let after = try #require(try journal.recover(only: [id]).first).events.map(\.revision)
        #expect(after == before + [next])
    }
}
