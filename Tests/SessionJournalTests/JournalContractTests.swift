import Dispatch
import Glibc
import Synchronization
import Testing

@testable import SessionJournal

/// The promises of `SessionJournaling`, checked against both journals: SQLite in a data directory and PostgreSQL on
/// the test process's private server.
@Suite(.timeLimit(.minutes(2))) struct JournalContractTests {
    private static func answer(_ id: String, _ key: String, revision: UInt64) -> KeyedAnswer {
        KeyedAnswer(
            sessionID: id,
            key: key,
            fingerprint: 42,
            epoch: 7,
            revision: revision,
            state: "{\"r\":\(revision)}"
        )
    }

    @Test(arguments: JournalBackend.allCases)
    func appendedRecordsAreReadBackAfterReopening(_ backend: JournalBackend) throws {
        let place = try JournalPlace(backend)
        defer { place.remove() }
        let (a, b) = (JournalFixtures.id(1), JournalFixtures.id(2))
        let journal = try place.open()
        let key = journal.fingerprintKey
        try journal.appendAndWait([.created(JournalFixtures.creation(a)), .created(JournalFixtures.creation(b))])
        try journal.appendAndWait([JournalFixtures.event(a, 1), JournalFixtures.event(b, 1, origin: .effect)])
        try journal.appendAndWait([JournalFixtures.event(a, 2), .answered(Self.answer(a, "k", revision: 2))])
        journal.close()

        let reopened = try place.open()
        defer { reopened.close() }
        #expect(reopened.fingerprintKey == key)
        #expect(key.count == 16)
        #expect(try reopened.start().sessions == 2)
        let recovery = try reopened.recover()
        #expect(recovery.problems.isEmpty)
        #expect(recovery.sessions.map(\.creation) == [JournalFixtures.creation(a), JournalFixtures.creation(b)])
        #expect(recovery.sessions[0].events.map(\.revision) == [1, 2])
        #expect(recovery.sessions[0].answers == [Self.answer(a, "k", revision: 2)])
        #expect(
            recovery.sessions[1].events == [JournalEvent(revision: 1, event: #"{"type":"add","n":1}"#, origin: .effect)]
        )
        #expect(try reopened.recover(only: [b]) == [recovery.sessions[1]])
        #expect(try reopened.recover(only: ["nobody-here-at-all-xx"]).isEmpty)
    }

    /// Keyed answers journaled before fingerprints were HMAC-SHA256 (a journal without the `fingerprint.scheme` mark,
    /// as an earlier build left it) read back with fingerprint 0, unknown, their checksums intact; once marked, the
    /// answers written since keep their fingerprints across reopening.
    @Test(arguments: JournalBackend.allCases)
    func answersOfAnEarlierFingerprintAreMarkedUnknownOnce(_ backend: JournalBackend) throws {
        let place = try JournalPlace(backend)
        defer { place.remove() }
        let id = JournalFixtures.id(1)
        func answer(_ key: String, _ revision: UInt64, _ fingerprint: UInt64) -> KeyedAnswer {
            KeyedAnswer(sessionID: id, key: key, fingerprint: fingerprint, epoch: 3, revision: revision, state: "{}")
        }
        let journal = try place.open()
        try journal.appendAndWait([
            .created(JournalFixtures.creation(id)), JournalFixtures.event(id, 1), .answered(answer("old", 1, 12_345)),
        ])
        // As an earlier build left it: no mark.
        try place.tamper(
            journal,
            sqlite: "DELETE FROM meta WHERE name = 'fingerprint.scheme'",
            postgres: "DELETE FROM fh_meta WHERE name = 'fingerprint.scheme'"
        )
        journal.close()

        let upgraded = try place.open()
        let adopted = try #require(try upgraded.recover(only: [id]).first)
        #expect(adopted.answers == [answer("old", 1, 0)])
        try upgraded.appendAndWait([JournalFixtures.event(id, 2), .answered(answer("new", 2, 777))])
        upgraded.close()

        let again = try place.open()
        defer { again.close() }
        let recovery = try again.recover()
        #expect(recovery.problems.isEmpty)
        #expect(recovery.sessions.first?.answers == [answer("old", 1, 0), answer("new", 2, 777)])
    }

    /// Group commits from many writers at once: each session's appends
    /// complete in the order they were made, all of them succeed, and every session reads back whole, without a gap.
    @Test(arguments: JournalBackend.allCases)
    func appendsFromManyWritersCompleteInOrderPerSessionAndReadBackWhole(_ backend: JournalBackend) throws {
        let place = try JournalPlace(backend)
        defer { place.remove() }
        let journal = try place.open()
        defer { journal.close() }
        let ids = (1...24).map(JournalFixtures.id)
        try journal.appendAndWait(ids.map { .created(JournalFixtures.creation($0)) })
        let revisions: UInt64 = 40
        let completed = Mutex([String: [UInt64]]())
        let failures = Mutex([String]())
        let done = DispatchGroup()
        DispatchQueue.concurrentPerform(iterations: ids.count) { index in
            let id = ids[index]
            for revision in 1...revisions {
                done.enter()
                // Without waiting: a session's next append is made while its previous one may still be in flight.
                journal.append([JournalFixtures.event(id, revision)]) { result in
                    if case .failure(let error) = result {
                        failures.withLock { $0.append("\(id) \(revision): \(error)") }
                    }
                    completed.withLock { $0[id, default: []].append(revision) }
                    done.leave()
                }
            }
        }
        #expect(done.wait(timeout: .now() + 60) == .success)
        #expect(failures.withLock { $0 }.isEmpty)
        let order = completed.withLock { $0 }
        for id in ids { #expect(order[id] == Array(1...revisions), "\(id)") }
        let sessions = try journal.recover(only: Set(ids))
        #expect(sessions.count == ids.count)
        for session in sessions {
            #expect(session.events.map(\.revision) == Array(1...revisions), "\(session.creation.id)")
            #expect(session.damage == nil)
        }
    }

    @Test(arguments: JournalBackend.allCases)
    func aSnapshotIsTheBaseAndCompactionKeepsWhatReadingNeeds(_ backend: JournalBackend) throws {
        let place = try JournalPlace(backend)
        defer { place.remove() }
        let id = JournalFixtures.id(1)
        let journal = try place.open()
        defer { journal.close() }
        try journal.appendAndWait(
            [.created(JournalFixtures.creation(id))] + (1...5).map { JournalFixtures.event(id, $0) }
        )
        try journal.appendAndWait([.snapshot(sessionID: id, revision: 3, state: #"{"count":6}"#)])
        try journal.appendAndWait([JournalFixtures.event(id, 6)])
        _ = try journal.compact()
        let session = try #require(try journal.recover(only: [id]).first)
        #expect(session.baseRevision == 3)
        #expect(session.baseState == #"{"count":6}"#)
        #expect(session.events.map(\.revision) == [4, 5, 6])
        #expect(session.damage == nil)
    }

    /// Schema versions (issue 22): the creation's, a snapshot's and each event's version, time and state checksum
    /// are read back, by an activation and as a history (which takes no ownership: the owner appends on).
    @Test(arguments: JournalBackend.allCases)
    func schemaVersionsAndStampsAreReadBackAndAHistoryTakesNoOwnership(_ backend: JournalBackend) throws {
        let place = try JournalPlace(backend)
        defer { place.remove() }
        let journal = try place.open()
        defer { journal.close() }
        let id = JournalFixtures.id(1)
        var creation = JournalFixtures.creation(id)
        creation.version = 2
        let first = EventStamp(version: 2, time: 1_234, stateChecksum: 99)
        let second = EventStamp(version: 3, time: 5_678, stateChecksum: UInt64.max - 7)
        try journal.appendAndWait([
            .created(creation),
            .event(sessionID: id, revision: 1, event: #"{"type":"add","n":1}"#, origin: .client, stamp: first),
        ])
        try journal.appendAndWait([
            .snapshot(sessionID: id, revision: 1, state: #"{"count":1}"#, version: 3),
            .event(sessionID: id, revision: 2, event: #"{"type":"add","n":2}"#, origin: .effect, stamp: second),
        ])
        let history = try #require(try journal.history(of: id))
        #expect(history.creation == creation)
        #expect(history.snapshots.first == KeptSnapshot(revision: 0, version: 2, state: creation.state))
        #expect(history.snapshots.last == KeptSnapshot(revision: 1, version: 3, state: #"{"count":1}"#))
        #expect(
            history.events.last
                == JournalEvent(revision: 2, event: #"{"type":"add","n":2}"#, origin: .effect, stamp: second)
        )
        #expect(history.problems.isEmpty)
        #expect(try journal.sessionCount() == 1)
        try journal.appendAndWait([JournalFixtures.event(id, 3)])  // still its owner

        let session = try #require(try journal.recover(only: [id]).first)
        #expect(session.creation.version == 2)
        #expect(session.baseVersion == 3)
        #expect(session.events.map(\.stamp) == [second, EventStamp()])
    }

    /// `journal.history.snapshots`: the newest kept snapshots and the events after the oldest of them stay for
    /// verification, on both journals alike; compaction keeps them too.
    @Test(arguments: JournalBackend.allCases)
    func keptSnapshotsAndTheEventsBetweenThemStayForVerification(_ backend: JournalBackend) throws {
        let place = try JournalPlace(backend)
        defer { place.remove() }
        let journal = try place.open(JournalConfiguration().keepingHistory(2))
        defer { journal.close() }
        let id = JournalFixtures.id(1)
        try journal.appendAndWait([.created(JournalFixtures.creation(id))])
        for revision in UInt64(1)...7 {
            var records = [JournalFixtures.event(id, revision)]
            if revision % 2 == 0 {
                records.append(.snapshot(sessionID: id, revision: revision, state: "{\"count\":\(revision)}"))
            }
            try journal.appendAndWait(records)
        }
        if backend == .postgres {
            // There each snapshot deletes the events up to the oldest kept one itself, from where the one before cut
            // (SQLite leaves them to compaction).
            let written = try #require(try journal.history(of: id))
            #expect(written.snapshots.map(\.revision) == [0, 4, 6])
            #expect(written.events.map(\.revision) == [5, 6, 7])
        }
        _ = try journal.compact()
        let history = try #require(try journal.history(of: id))
        #expect(history.snapshots.map(\.revision) == [0, 4, 6])
        #expect(history.events.map(\.revision) == [5, 6, 7])
        #expect(history.problems.isEmpty)
        let session = try #require(try journal.recover(only: [id]).first)
        #expect(session.baseRevision == 6)
        #expect(session.events.map(\.revision) == [7])
    }

    /// `session.retention`: a session that left memory (its settled mark, a release) has a time; retiring deletes
    /// only those whose time is before the cutoff and that have no timer to come, as a removal would.
    @Test(arguments: JournalBackend.allCases)
    func retentionRetiresOnlySessionsThatLeftBeforeTheCutoffWithNoTimerToCome(_ backend: JournalBackend) throws {
        let place = try JournalPlace(backend)
        defer { place.remove() }
        let journal = try place.open()
        defer { journal.close() }
        let (left, timed) = (JournalFixtures.id(1), JournalFixtures.id(2))
        try journal.appendAndWait([
            .created(JournalFixtures.creation(left)), JournalFixtures.event(left, 1),
            .created(JournalFixtures.creation(timed)), .deadline(sessionID: timed, at: 10),
        ])
        try journal.appendAndWait([
            .snapshot(sessionID: left, revision: 1, state: "{}"), .settled(sessionID: left, revision: 1),
            .settled(sessionID: timed, revision: 0),
        ])
        #expect(try journal.stampActivity(at: 5) == 0)  // both have a time: they left memory
        #expect(try journal.abandonedSessions(before: 1, limit: 10).isEmpty)
        #expect(try journal.abandonedSessions(before: .max, limit: 10) == [left])  // timed has a timer to come
        #expect(try journal.retire([left, timed], leftBefore: 1).isEmpty)
        #expect(try journal.retire([left, timed], leftBefore: .max) == [left])
        #expect(try journal.recover(only: [left]).isEmpty)

        // Its timer cleared (by the session, taken back), `timed` goes once its time is past the cutoff.
        #expect(try journal.recover(only: [timed]).count == 1)
        try journal.appendAndWait([.deadline(sessionID: timed, at: nil), .settled(sessionID: timed, revision: 0)])
        try journal.touchActivity(of: [timed], at: 100)
        #expect(try journal.abandonedSessions(before: 100, limit: 10).isEmpty)
        #expect(try journal.abandonedSessions(before: 101, limit: 10) == [timed])
        #expect(try journal.retire([timed], leftBefore: 101) == [timed])
        #expect(try journal.recover().sessions.isEmpty)
    }

    @Test(arguments: JournalBackend.allCases)
    func aRemovedSessionIsGoneAndARecreatedOneStartsAfresh(_ backend: JournalBackend) throws {
        let place = try JournalPlace(backend)
        defer { place.remove() }
        let journal = try place.open()
        defer { journal.close() }
        let (gone, again) = (JournalFixtures.id(1), JournalFixtures.id(2))
        for id in [gone, again] {
            try journal.appendAndWait([
                .created(JournalFixtures.creation(id, epoch: 1)), JournalFixtures.event(id, 1),
                .answered(Self.answer(id, "k", revision: 1)), .deadline(sessionID: id, at: 10),
            ])
        }
        try journal.appendAndWait([.removed(sessionID: gone)])
        try journal.appendAndWait([.created(JournalFixtures.creation(again, epoch: 2))])
        _ = try journal.compact()
        let sessions = try journal.recover().sessions
        #expect(sessions.map(\.creation.id) == [again])
        #expect(sessions[0].creation.epoch == 2)
        #expect(sessions[0].events.isEmpty)
        #expect(sessions[0].answers.isEmpty)
        #expect(try journal.deadlineCount() == 0)
    }

    @Test(arguments: JournalBackend.allCases)
    func answersAreTrimmedToTheNewestOfEachSession(_ backend: JournalBackend) throws {
        let place = try JournalPlace(backend)
        defer { place.remove() }
        let journal = try place.open(JournalConfiguration(answersPerSession: 3))
        defer { journal.close() }
        let id = JournalFixtures.id(1)
        try journal.appendAndWait([.created(JournalFixtures.creation(id))])
        for revision in UInt64(1)...8 {
            try journal.appendAndWait([
                JournalFixtures.event(id, revision), .answered(Self.answer(id, "k\(revision)", revision: revision)),
            ])
        }
        _ = try journal.compact()
        let session = try #require(try journal.recover(only: [id]).first)
        #expect(session.answers.map(\.key) == ["k6", "k7", "k8"])
    }

    @Test(arguments: JournalBackend.allCases)
    func theDeadlineIndexAnswersByTime(_ backend: JournalBackend) throws {
        let place = try JournalPlace(backend)
        defer { place.remove() }
        let (a, b, c) = (JournalFixtures.id(1), JournalFixtures.id(2), JournalFixtures.id(3))
        let journal = try place.open()
        defer { journal.close() }
        try journal.appendAndWait([a, b, c].map { .created(JournalFixtures.creation($0)) })
        try journal.appendAndWait([
            .deadline(sessionID: a, at: 300), .deadline(sessionID: b, at: 100), .deadline(sessionID: c, at: 200),
        ])
        // Passivated: each lets go of its session (what a shared journal wakes is what nobody holds).
        try journal.appendAndWait([a, b, c].map { .settled(sessionID: $0, revision: 0) })
        #expect(try journal.deadlines(through: 250, limit: 10).map(\.sessionID) == [b, c])
        #expect(try journal.deadlines(through: 250, limit: 1) == [JournalDeadline(sessionID: b, at: 100)])
        #expect(try journal.deadline(after: 100) == 200)
        #expect(try journal.deadline(after: 300) == nil)
        #expect(try journal.deadlines(after: 0, limit: 10).map(\.sessionID) == [b, c, a])
        #expect(try journal.deadlines(after: 100, limit: 1) == [JournalDeadline(sessionID: c, at: 200)])
        #expect(try journal.deadlineCount() == 3)
    }

    @Test(arguments: JournalBackend.allCases)
    func appendsArrivingDuringACommitShareTheNextOneAndCompleteInOrder(_ backend: JournalBackend) throws {
        let place = try JournalPlace(backend)
        defer { place.remove() }
        let journal = try place.open()
        defer { journal.close() }
        let ids = (1...20).map(JournalFixtures.id)
        try journal.appendAndWait(ids.map { .created(JournalFixtures.creation($0)) })
        let before = journal.statistics.commits
        let release = DispatchSemaphore(value: 0)
        place.hold(journal, until: release)
        let order = Mutex<[Int]>([])
        let completed = DispatchGroup()
        // Text that needs escaping on its way (a quote, a backslash, a brace, a comma, non-ASCII).
        let tricky = #"{"type":"say","text":"a "quoted" \ path, {x} – ü"}"#
        for (index, id) in ids.enumerated() {
            completed.enter()
            journal.append([.event(sessionID: id, revision: 1, event: EventText(tricky), origin: .client)]) { result in
                if case .success = result { order.withLock { $0.append(index) } }
                completed.leave()
            }
        }
        release.signal()
        completed.wait()
        #expect(order.withLock { $0 } == Array(0..<20))
        #expect(journal.statistics.commits - before == 1)
        let read = try journal.recover(only: Set(ids))
        #expect(read.count == 20)
        #expect(read.allSatisfy { $0.events == [JournalEvent(revision: 1, event: tricky, origin: .client)] })
    }

    /// A closed journal answers an append on its queue too, never inside `append`: a caller may append under a lock
    /// its completion takes (`SessionRecorder` does), and an answer given inline took that lock a second time.
    @Test(arguments: JournalBackend.allCases)
    func aClosedJournalAnswersAnAppendOnItsQueueNotInside(_ backend: JournalBackend) throws {
        let place = try JournalPlace(backend)
        defer { place.remove() }
        let journal = try place.open()
        journal.close()
        let caller = pthread_self()
        let seen = Mutex<(inside: Bool, code: JournalError.Code?)?>(nil)
        let answered = DispatchSemaphore(value: 0)
        journal.append([JournalFixtures.event(JournalFixtures.id(1), 1)]) { result in
            let code: JournalError.Code? = if case .failure(let error) = result { error.code } else { nil }
            seen.withLock { $0 = (pthread_equal(pthread_self(), caller) != 0, code) }
            answered.signal()
        }
        #expect(answered.wait(timeout: .now() + 10) == .success)
        let outcome = try #require(seen.withLock { $0 })
        #expect(!outcome.inside, "the completion ran on the thread that appended, inside append")
        #expect(outcome.code == .closed)
    }

    @Test(arguments: JournalBackend.allCases)
    func aDamagedEventEndsItsSessionsHistoryThere(_ backend: JournalBackend) throws {
        let place = try JournalPlace(backend)
        defer { place.remove() }
        let id = JournalFixtures.id(1)
        let journal = try place.open()
        defer { journal.close() }
        try journal.appendAndWait(
            [.created(JournalFixtures.creation(id))] + (1...4).map { JournalFixtures.event(id, $0) }
        )
        try place.tamper(
            journal,
            sqlite: "UPDATE events SET event = '{\"type\":\"add\",\"n\":99}' WHERE rev = 3",
            postgres: "UPDATE fh_events SET event = '{\"type\":\"add\",\"n\":99}' WHERE rev = 3"
        )
        let session = try #require(try journal.recover(only: [id]).first)
        #expect(session.events.map(\.revision) == [1, 2])
        #expect(session.damage == "event 3 fails its checksum; it and later events dropped")
    }

    @Test(arguments: JournalBackend.allCases)
    func aClosedJournalRefusesAppends(_ backend: JournalBackend) throws {
        let place = try JournalPlace(backend)
        defer { place.remove() }
        let journal = try place.open()
        journal.close()
        #expect(throws: JournalError(.closed, "the journal is closed")) {
            try journal.appendAndWait([.created(JournalFixtures.creation(JournalFixtures.id(1)))])
        }
    }
}
