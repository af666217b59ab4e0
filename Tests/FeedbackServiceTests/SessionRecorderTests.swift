import CSQLiteFaults
import CurlClient
import FeedbackLoop
import Foundation
import Logging
import SessionJournal
import SystemKit
import Systems
import Testing
import Upstream

@testable import FeedbackService

@Suite struct SessionRecorderTests {
    private func type(_ json: String) -> String? {
        SessionRecorder<CounterSystem>.topLevelType(Array(json.utf8))
    }

    @Test func findsTheTopLevelTypeWhereverItIs() {
        #expect(type(#"{"type":"add","amount":2}"#) == "add")
        #expect(type(#"{"amount":2,"type":"add"}"#) == "add")
    }

    @Test func ignoresNestedTypesAndStringsThatLookLikeKeys() {
        #expect(type(#"{"inner":{"type":"x"},"type":"y"}"#) == "y")
        #expect(type(#"{"note":"type","type":"z"}"#) == "z")
        #expect(type(#"{"a":"\"type\":\"no\"","type":"q"}"#) == "q")
        #expect(type(#"{"list":[{"type":"x"}],"type":"w"}"#) == "w")
    }

    @Test func hasNoAnswerWithoutAPlainStringType() {
        #expect(type(#"{"type":"a\"b"}"#) == nil)
        #expect(type(#"{"type":3}"#) == nil)
        #expect(type(#"{"inner":{"type":"x"}}"#) == nil)
        #expect(type("[]") == nil)
        #expect(type("") == nil)
    }

    /// An encoding that starts `{"type":"` is read by a word compare first; its answers are the scan's.
    @Test func theOpeningTypeKeyIsReadAsTheScanReadsIt() {
        var word: UInt64 = 0
        for (index, byte) in "{\"type\":".utf8.enumerated() { word |= UInt64(byte) << (8 * UInt64(index)) }
        #expect(SessionRecorder<CounterSystem>.openingTypeKey == word)
        #expect(type(#"{"type":"increment"}"#) == "increment")
        #expect(type(#"{"type":"x"}"#) == "x")
        #expect(type(#"{"type":""}"#) == "")
        #expect(type(#"{"type":"unclosed"#) == "unclosed")
        #expect(type(#"{"type":"a\b"}"#) == nil)
        #expect(type("{\"type\":\"") == "")  // the opening alone: an empty value, as the scan reads it
        #expect(type("{\"type\":") == nil)
        #expect(type(#"{"type" :"spaced"}"#) == nil)
        #expect(type(#"{"tYpe":"other","type":"t"}"#) == "t")
    }
}

/// While a POST's batch is open, the recorder holds the steps; the batch's end appends them with its keyed answer
/// in one append, so one group commit holds the events and the key or neither.
@Suite(.timeLimit(.minutes(1)))
struct SessionRecorderBatchTests {
    private struct NoUpstream: UpstreamFetching {
        struct Called: Error {}
        func fetch(_ request: UpstreamRequest) async throws -> UpstreamResponse { throw Called() }
    }

    private struct Fixture {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("fh-recorder-\(UUID())").path
        let id = SessionID.random()
        let journal: Journal
        let persistence: SessionPersistence
        let recorder: SessionRecorder<CounterSystem>
        let loop: Loop<CounterSystem.State, CounterSystem.Event>

        /// With `faults`, the journal goes through the fault VFS (switched for `directory`).
        init(faults: Bool = false) throws {
            let logger = Logger(label: "test") { _ in SwiftLogNoOpLogHandler() }
            if faults { #expect(fh_faults_register() == 0) }
            journal = try Journal.open(
                directory: directory,
                configuration: JournalConfiguration(
                    compactionIntervalMilliseconds: 0,
                    probeIntervalMilliseconds: 1,
                    vfs: faults ? String(cString: fh_faults_vfs_name) : nil
                ),
                logger: logger
            )
            persistence = SessionPersistence(journal: journal, snapshotInterval: 1000, logger: logger)
            let system = CounterSystem()
            recorder = SessionRecorder<CounterSystem>(
                id: id,
                clientTypes: ["increment"],
                persistence: persistence,
                creation: SessionCreation(
                    id: id.description,
                    system: system.name,
                    epoch: 1,
                    state: #"{"count":0}"#,
                    createdAt: 0
                ),
                revision: 0
            )
            loop = system.makeLoop(
                from: system.initialState,
                environment: SystemEnvironment(clock: TestClock(), upstream: NoUpstream(), logger: logger)
            )
            recorder.attach(to: loop)
        }

        /// What the journal holds once everything appended so far is durable.
        func journaled() async throws -> RecoveredSession? {
            try await journal.append([])
            return try journal.recover().sessions.first
        }

        /// What `whenJournaled` says now, once every append made so far is settled.
        func whenJournaled() async -> JournalError? {
            await withCheckedContinuation { continuation in
                recorder.whenJournaled { continuation.resume(returning: $0) }
            }
        }

        func close() {
            loop.stop()
            journal.close()
            try? FileManager.default.removeItem(atPath: directory)
        }
    }

    @Test func anOpenBatchHoldsItsStepsUntilItEndsWithItsAnswer() async throws {
        let fixture = try Fixture()
        defer { fixture.close() }
        fixture.recorder.batchStarted()
        _ = await fixture.loop.send(contentsOf: [.increment, .increment])
        #expect(try await fixture.journaled()?.events.isEmpty == true)
        let answer = KeyedAnswer(
            sessionID: fixture.id.description,
            key: "k",
            fingerprint: 1,
            epoch: 1,
            revision: 2,
            state: #"{"count":2}"#
        )
        fixture.recorder.batchEnded(completed: true, answer: answer)
        let session = try #require(try await fixture.journaled())
        #expect(session.events.map(\.revision) == [1, 2])
        #expect(session.answers == [answer])
    }

    @Test func aBatchThatNeverRanAppendsHeldStepsOnlyWhenNoOtherBatchIsOpen() async throws {
        let fixture = try Fixture()
        defer { fixture.close() }
        fixture.recorder.batchStarted()  // another post's batch, still open
        fixture.recorder.batchStarted()  // a post whose If-Match will fail
        _ = await fixture.loop.send(contentsOf: [.increment])
        fixture.recorder.batchEnded(completed: false)
        #expect(try await fixture.journaled()?.events.isEmpty == true)
        fixture.recorder.batchEnded(completed: false)
        #expect(try await fixture.journaled()?.events.map(\.revision) == [1])
        // No batch open: steps go to the journal at once.
        _ = await fixture.loop.send(contentsOf: [.decrement])
        #expect(try await fixture.journaled()?.events.map(\.revision) == [1, 2])
    }

    /// Passivation seals the recorder: what it appended before is journaled, with a snapshot at its last step
    /// marked settled; a step after the seal appends nothing, and the wait that needed that step fails with `sealed`.
    @Test func aSealedRecorderAppendsNothingMoreAndItsWaitsSaySo() async throws {
        let fixture = try Fixture()
        defer { fixture.close() }
        _ = await fixture.loop.send(contentsOf: [.increment])
        fixture.recorder.seal()
        #expect(await fixture.whenJournaled() == nil)
        _ = await fixture.loop.send(contentsOf: [.increment])
        #expect(await fixture.whenJournaled() == SessionRecorder<CounterSystem>.sealed)
        let journaled = try #require(try await fixture.journaled())
        #expect(journaled.revision == 1)
        #expect(journaled.baseRevision == 1)
        #expect(journaled.baseState == #"{"count":1}"#)
    }

    /// A failed append is final for its session: every wait from then on fails, nothing of the session is appended
    /// any more (not even once the journal commits again), and the session is fenced.
    @Test func aFailedAppendIsStickyAndFencesTheSession() async throws {
        let fixture = try Fixture(faults: true)
        defer { fixture.close() }
        _ = await fixture.loop.send(contentsOf: [.increment])
        #expect(await fixture.whenJournaled() == nil)
        #expect(fixture.persistence.fenceProblem(fixture.id) == nil)

        fh_faults_set(fixture.directory, FH_FAULT_WRITE)
        _ = await fixture.loop.send(contentsOf: [.increment])
        #expect(await fixture.whenJournaled() != nil)
        #expect(fixture.persistence.fenceProblem(fixture.id)?.status == 503)
        fh_faults_set(fixture.directory, FH_FAULT_NONE)
        while fixture.journal.health != .healthy {
            try await Task.sleep(for: .milliseconds(1))
        }
        _ = await fixture.loop.send(contentsOf: [.increment])
        #expect(await fixture.whenJournaled() != nil)
        #expect(try await fixture.journaled()?.events.map(\.revision) == [1])
    }
}
