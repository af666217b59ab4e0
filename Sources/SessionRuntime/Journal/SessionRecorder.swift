public import CoreMetrics
public import FeedbackLoop
import Foundation
public import SessionJournal
public import Synchronization
public import SystemKit

/// Journals one session's history in loop order: its creation, every reduced event (client events and the
/// events of its effects) with its revision, and a snapshot every `snapshotInterval` revisions.
///
/// It is a loop observer, so it sees every step, in order, on the engine owner's thread, before a batch's
/// completion runs: by the time a POST has its step, the events up to it are queued in the journal.
///
/// A POST's events go to the journal in one append, with the answer to its `Idempotency-Key` if it has one, so
/// one group commit holds all of them or none: a crash can never keep the events and lose the key (a retry would
/// apply them twice). While any POST's batch is queued in the loop (`batchStarted`), steps are held in `held`;
/// a batch's completion (`batchEnded`, which the loop runs right after the batch's last step and before any
/// later step) appends everything held. A batch never started (`If-Match` failed) or dropped (the loop stopped)
/// appends what is held only when no other batch is open, since another may be halfway through its steps.
///
/// Durability, by sequence number: the recorder numbers its appends (1, 2, ...) and counts how many the journal
/// confirmed; the journal completes them in order. `whenJournaled` answers once every append made so far is
/// confirmed, so a create, a PUT and a POST wait for the commit holding their own records (and the session's earlier
/// ones), never for whichever commit comes next. The first failed append is sticky: the recorder appends nothing
/// more, every waiter from then on gets the failure, and the session is fenced (`SessionPersistence.fence`) until
/// the service replaces it with a session re-anchored from the journal, which has a recorder of its own.
///
/// Concurrency: `record(_:)` runs only in the loop's observer calls, which the loop serialises; `creation`, the
/// deadlines and `feedbackName` (set by `attach` before the first step) are touched only there, so their accesses
/// are not checked at run time (`@exclusivity(unchecked)`). `batchStarted` and `batchEnded` come from any thread;
/// the open batches, the held records, the append counts and the waiters are under a `Mutex`, and appends to the
/// journal are made under it, so they keep order and none is made after the failure was seen. The journal's
/// completions run on its writer queue and take the same `Mutex`.
@usableFromInline
package final class SessionRecorder<System: FeedbackSystem>: @unchecked Sendable {
    @usableFromInline
    typealias Held = RecorderHeld

    @usableFromInline
    let id: String
    private let sessionID: SessionID
    @usableFromInline
    let persistence: SessionPersistence
    /// The system's client event types as bytes, compared with an encoded event's `"type"` without making a string
    /// of it or hashing one (every journaled event is looked up).
    private let clientTypes: [[UInt8]]
    /// The system's `nextDeadline(of:)`.
    @usableFromInline
    let deadline: @Sendable (System.State) -> WallTime?
    /// The deadline last journaled; touched only in `record`, like `creation`.
    @usableFromInline
    @exclusivity(unchecked)
    var journaledDeadline: WallTime?
    /// The deadline of the last step, for the timer's lateness when a step replaces it; touched only in `record`
    /// (and by `restoring(from:)` before the loop exists).
    @usableFromInline
    @exclusivity(unchecked)
    var pendingDeadline: WallTime?
    @usableFromInline
    @exclusivity(unchecked)
    var creation: SessionCreation?
    @usableFromInline
    let startRevision: UInt64
    @usableFromInline
    let held = Mutex(Held())
    /// The system's schema version, written on every record.
    @usableFromInline
    let version: Int
    /// What each event's time and a timer's lateness are read from (the session's wall clock, deadlines' time).
    @usableFromInline
    let wallClock: WallClock

    /// `creation` is journaled with the first step (nil for a restored session); `revision` is the revision
    /// the loop starts at.
    /// `clientTypes` is the system's client event types, one set shared by all its sessions.
    package init(
        id: SessionID,
        clientTypes: Set<String>,
        deadline: @escaping @Sendable (System.State) -> WallTime? = { _ in nil },
        wallClock: WallClock = .system,
        persistence: SessionPersistence,
        creation: SessionCreation?,
        revision: UInt64,
        version: Int = 1
    ) {
        self.version = version
        self.wallClock = wallClock
        self.id = id.description
        sessionID = id
        self.persistence = persistence
        self.clientTypes = clientTypes.map { Array($0.utf8) }
        self.deadline = deadline
        self.creation = creation
        startRevision = revision
    }

    /// Tells a restored session's recorder the state its loop starts from, before the loop exists: a deadline
    /// already due fires as the loop starts, before `attach`, and its lateness counts from that deadline.
    func restoring(from state: System.State) {
        pendingDeadline = deadline(state)
    }

    /// The names of the loop's feedbacks by position (`Loop.feedbackName(at:)`); set by `attach` before the first
    /// step, read only in `record`.
    @usableFromInline
    @exclusivity(unchecked)
    var feedbackName: (Int) -> String = { "feedback \($0 + 1)" }

    /// Observes `loop` until it stops. `encoding` gives a step's state encoded (for its checksum and a snapshot
    /// record); a session's recorder asks the session (`attach(to:)` of a `SystemSession`), whose cache then holds it
    /// for the stream and the answer.
    @inlinable
    package func attach(
        to loop: Loop<System.State, System.Event>,
        encoding: @escaping @Sendable (System.State, UInt64) -> [UInt8] = { state, _ in System.encodeState(state) }
    ) {
        feedbackName = { [weak loop] index in loop?.feedbackName(at: index) ?? "feedback \(index + 1)" }
        loop.observe { step in self.record(step) { encoding(step.state, step.revision) } }
    }

    /// Observes `session`'s loop until it stops, each step's state encoded once for the session and its recorder:
    /// the session's snapshot of the step (`SessionSnapshots.snapshot(at:encoding:)`: a post's trial encoding when the
    /// step is its batch's last, else encoded and kept there), so the checksum, a snapshot record, the stream's frame
    /// and a post's answer share one encoding.
    @inlinable
    func attach(to session: SystemSession<System>) {
        // The session's snapshots, not the session: the session owns the loop, which owns this observer.
        let snapshots = session.snapshots
        attach(to: session.loop) { state, revision in
            snapshots.snapshot(at: revision) { System.encodeState(state) }.state
        }
    }

    @inlinable
    func record(_ step: Step<System.State, System.Event>, _ encoding: () -> [UInt8]) {
        guard let event = step.event else {
            // The first call: the current step. Events an effect sent before the observer was attached were
            // reduced without it; a snapshot at the current revision covers them.
            var records: [JournalRecord] = []
            if let creation { records.append(.created(creation)) }
            creation = nil
            if step.revision != startRevision { records.append(snapshot(step)) }
            records += deadlineRecord(step.state)  // a restored deadline that fired before this is measured here
            hold(nil, records, step)
            return
        }
        let bytes: [UInt8]
        do {
            bytes = try System.encodeEvent(event)
        } catch {
            preconditionFailure("an event of system \(System.self) failed to encode: \(error)")
        }
        // A feedback's event says which feedback it is (a loop with an effect budget tags them); another event is a
        // client's when its type is one of the system's client events.
        let feedback = step.feedback.map(feedbackName)
        let origin: EventOrigin = feedback == nil && isClientType(bytes) ? .client : .effect
        // The state the event produced, encoded once (`encoding`: the session's snapshot of the step, which a post's
        // trial made already when the step is its batch's last) for its checksum, by which `verify` and a fixture's
        // replay find the first revision at which a build's reducer gives another state, and for a snapshot record.
        let snapshotDue = step.revision % persistence.snapshotInterval == 0
        let encoded = persistence.stateChecksums || snapshotDue ? encoding() : nil
        let stamp = EventStamp(
            version: version,
            time: wallClock.now().millisecondsSince1970,
            stateChecksum: persistence.stateChecksums ? encoded.map { StateChecksum.of($0) } : nil,
            feedback: feedback
        )
        // The event apart from what may follow it (usually nothing): no array is made for one record.
        var more: [JournalRecord] = []
        if snapshotDue, let encoded { more.append(snapshot(step, encoded)) }
        more += deadlineRecord(step.state)
        hold(
            .event(sessionID: id, revision: step.revision, event: EventText(utf8: bytes), origin: origin, stamp: stamp),
            more,
            step
        )
    }

    /// The session's next deadline for the journal's index, when it differs from the one journaled last (none at
    /// first: the index holds a restored session's, which its state holds too).
    @inlinable
    func deadlineRecord(_ state: System.State) -> [JournalRecord] {
        let next = deadline(state)
        // A deadline that came and was replaced: its timer fired (or an event raced it), this late.
        if let pending = pendingDeadline, next != pending {
            let late = wallClock.now().millisecondsSince1970 - pending.millisecondsSince1970
            if late >= 0 { persistence.timerLateness.recordNanoseconds(late * 1_000_000) }
        }
        pendingDeadline = next
        guard next != journaledDeadline else { return [] }
        journaledDeadline = next
        return [.deadline(sessionID: id, at: next?.millisecondsSince1970)]
    }

    /// Appends `step`'s records (`first`, then `more`) now, or holds them while a batch is open. `first` is taken and
    /// moved into the held records: a copy retained its strings and bytes for the caller's to release them.
    @inlinable
    func hold(
        _ first: consuming JournalRecord?,
        _ more: [JournalRecord],
        _ step: Step<System.State, System.Event>
    ) {
        var first = first
        held.withLock { held in
            if held.openBatches > 0 {
                if let record = first.take() { held.records.append(record) }
                held.records.append(contentsOf: more)
                held.heldLast = .init(state: step.state, revision: step.revision)
            } else {
                var records = more
                if let record = first.take() { records.insert(record, at: 0) }
                if !records.isEmpty { append(records, &held) }
                held.last = .init(state: step.state, revision: step.revision)
                Self.unpark(&held)
            }
        }
    }

    /// Under `held`, after `last` moved on: the parked waits its revision reached become waiters for the appends
    /// made so far.
    @usableFromInline
    static func unpark(_ held: inout Held) {
        guard !held.parked.isEmpty, let last = held.last?.revision else { return }
        let through = held.appended
        for wait in held.parked where wait.revision <= last {
            held.waiters.append(Held.Waiter(through: through, notify: wait.notify))
        }
        held.parked.removeAll { $0.revision <= last }
    }

    /// Appends `records` at once, outside any batch: what a restored session journals afresh before its loop runs.
    func journal(_ records: [JournalRecord]) {
        held.withLock { append(records, &$0) }
    }

    /// Under `held`: one numbered append, unless an earlier one failed or the recorder is sealed.
    @usableFromInline
    func append(_ records: [JournalRecord], _ held: inout Held) {
        guard held.failure == nil else { return }
        guard !held.sealed else {
            held.failure = Self.sealed
            return
        }
        held.appended += 1
        persistence.journal.append(records) { [self] result in settled(result) }
    }

    /// The journal's completion of the oldest unconfirmed append.
    private func settled(_ result: Result<Void, JournalError>) {
        var outcome = held.withLock { held -> Held.Settled in
            switch result {
            case .success:
                held.journaled += 1
                // Waiters are added with the append count of their time, which only grows: the ready ones are a
                // prefix, and usually all of them (taken without copying), and usually one (a post's answer): moved
                // out then, the list keeping its storage for the next one.
                let through = held.journaled
                let count = held.waiters.prefix { $0.through <= through }.count
                if count == 0 { return Held.Settled() }
                if count == 1, held.waiters.count == 1 { return Held.Settled(one: held.waiters.removeLast()) }
                if count == held.waiters.count {
                    defer { held.waiters = [] }
                    return Held.Settled(ready: held.waiters)
                }
                defer { held.waiters.removeFirst(count) }
                return Held.Settled(ready: Array(held.waiters[..<count]))
            case .failure(let error):
                if held.failure == nil {
                    // Fenced before the failure is visible (a `whenJournaled` on another thread answers from it at
                    // once) and before any waiter answers, so that a client told 503 finds the session fenced.
                    persistence.fence(sessionID, error)
                    held.failure = error
                }
                defer {
                    held.waiters = []
                    held.parked = []
                }
                return Held.Settled(
                    ready: held.waiters + held.parked.map { Held.Waiter(through: 0, notify: $0.notify) },
                    failure: held.failure
                )
            }
        }
        // Moved out, not copied: a waiter holding an answer's snapshot is copied through its enum's value witnesses.
        if let one = outcome.one.take() { tell(one.notice, outcome.failure) }
        for index in outcome.ready.indices { tell(outcome.ready[index].notice, outcome.failure) }
    }

    /// Tells a waiter its appends are journaled (`failure` nil) or not.
    private func tell(_ notice: consuming Held.Notice, _ failure: JournalError?) {
        switch consume notice {
        case .notify(let notify):
            notify(failure)
        case .answer(let completion, let snapshot):
            if let failure {
                completion(.failure(SystemSession<System>.notJournaledProblem(failure, sessionID)))
            } else {
                completion(.success(snapshot))
            }
        }
    }

    /// Calls `notify` with nil once every append made so far is journaled (at once when they are), or with the
    /// error once one of them failed (at once when one did).
    @usableFromInline
    package func whenJournaled(_ notify: @escaping @Sendable (JournalError?) -> Void) {
        whenJournaled(.notify(notify))
    }

    /// Answers a post with `snapshot` once every append made so far is journaled (at once when they are), or with
    /// the journal's problem once one of them failed: `whenJournaled(_:)` without a closure made for the wait.
    @usableFromInline
    func whenJournaled(
        answer completion: @escaping @Sendable (Result<SessionSnapshot, APIError>) -> Void,
        with snapshot: SessionSnapshot
    ) {
        whenJournaled(.answer(completion, snapshot))
    }

    private func whenJournaled(_ notice: Held.Notice) {
        let now = held.withLock { held -> JournalError?? in
            if let failure = held.failure { return .some(failure) }
            if held.journaled >= held.appended { return .some(nil) }
            held.waiters.append(Held.Waiter(through: held.appended, notice: notice))
            return nil
        }
        if let now { tell(notice, now) }
    }

    /// Calls `notify` with nil once the records of the step at `revision` (and of every step before it) are
    /// journaled, or with the error once an append failed. A step still held in an open batch waits for its batch's
    /// append. What a stream shows: only states nothing can undo (a crash, a refused write, another replica's
    /// takeover).
    func whenJournaled(revision: UInt64, _ notify: @escaping @Sendable (JournalError?) -> Void) {
        let now = held.withLock { held -> JournalError?? in
            if let failure = held.failure { return .some(failure) }
            guard appended(through: revision, held) else {
                held.parked.append(Held.Parked(revision: revision, notify: notify))
                return nil
            }
            if held.journaled >= held.appended { return .some(nil) }
            held.waiters.append(Held.Waiter(through: held.appended, notify: notify))
            return nil
        }
        if let now { notify(now) }
    }

    /// Whether the records of the step at `revision` (and of every step before it) are journaled: what
    /// `whenJournaled(revision:)` would answer at once with nil. False once an append failed.
    func isJournaled(revision: UInt64) -> Bool {
        held.withLock { held in
            held.failure == nil && appended(through: revision, held) && held.journaled >= held.appended
        }
    }

    /// Under `held`: whether the records of the step at `revision` are appended (not held in an open batch).
    private func appended(through revision: UInt64, _ held: Held) -> Bool {
        (held.last?.revision ?? startRevision) >= revision
    }

    /// The failure of records dropped by a sealed recorder: the session was passivated before they were appended.
    package static var sealed: JournalError {
        JournalError(.closed, "the session was passivated before its records were appended")
    }

    /// Passivation: a last append, the snapshot of the last step whose records were appended with the mark that the
    /// session is settled there (so that reading it back needs no scan of the log), then nothing more. Every append
    /// made before is already queued in the journal (appends are made under the same lock), so a journal read after
    /// this call sees all of them; records a step still running or a batch still open would append are dropped,
    /// and the waits that needed them fail with `sealed`. After a failed append nothing is added.
    package func seal() {
        held.withLock { held in
            if !held.sealed, held.failure == nil, let last = held.last {
                let state = String(decoding: Self.encode(last.state), as: UTF8.self)
                append(
                    [
                        .snapshot(sessionID: id, revision: last.revision, state: state, version: version),
                        .settled(sessionID: id, revision: last.revision),
                    ],
                    &held
                )
            }
            held.sealed = true
        }
    }

    /// A POST is about to queue a batch of events.
    @usableFromInline
    package func batchStarted() {
        held.withLock { $0.openBatches += 1 }
    }

    /// The batch `batchStarted` announced has ended: `completed` when its last step was reduced (this runs in
    /// its completion, right after that step's observers), false when it was never queued or was dropped. A
    /// completed batch's held records are appended with `answer`, in one append.
    @usableFromInline
    package func batchEnded(completed: Bool, answer: KeyedAnswer? = nil, sequenced: ClientSequence? = nil) {
        held.withLock { held in
            held.openBatches -= 1
            if let answer { held.records.append(.answered(answer)) }
            if let sequenced { held.records.append(.sequenced(sequenced)) }
            guard completed || held.openBatches == 0, !held.records.isEmpty else { return }
            append(held.records, &held)
            // The journal copied them: the buffer stays for the next batch (one allocation fewer per post).
            held.records.removeAll(keepingCapacity: true)
            if let heldLast = held.heldLast.take() { held.last = heldLast }  // moved, not copied
            Self.unpark(&held)
        }
    }

    /// Encodes a state `Held` keeps (always a `System.State`): for a passivation's snapshot, not per step.
    private static func encode(_ state: any Sendable) -> [UInt8] {
        guard let state = state as? System.State else {
            preconditionFailure("a recorder of \(System.self) held a state of type \(type(of: state))")
        }
        return System.encodeState(state)
    }

    @inlinable
    func snapshot(_ step: Step<System.State, System.Event>, _ encoded: [UInt8]? = nil) -> JournalRecord {
        let state = String(decoding: encoded ?? SystemSession<System>.encode(step.state), as: UTF8.self)
        return .snapshot(sessionID: id, revision: step.revision, state: state, version: version)
    }

    /// Whether the encoded event's top-level `"type"` is one of the system's client event types.
    @usableFromInline
    func isClientType(_ bytes: [UInt8]) -> Bool {
        bytes.withUnsafeBufferPointer { all in
            guard let range = Self.topLevelTypeRange(all) else { return false }
            let type = UnsafeBufferPointer(rebasing: all[range])
            for candidate in clientTypes where candidate.count == type.count {
                let equal = candidate.withUnsafeBufferPointer {
                    type.isEmpty || memcmp($0.baseAddress!, type.baseAddress!, type.count) == 0
                }
                if equal { return true }
            }
            return false
        }
    }

    /// The string value of the top-level `"type"` member of compact JSON (what `JSONEncoder` writes), found by
    /// one scan instead of a parse; nil when there is none or it holds escapes.
    package static func topLevelType(_ bytes: [UInt8]) -> String? {
        bytes.withUnsafeBufferPointer { all in
            topLevelTypeRange(all).map { String(decoding: all[$0], as: UTF8.self) }
        }
    }

    /// `{"type":` as a little-endian word (its bytes 7B 22 74 79 70 65 22 3A).
    package static var openingTypeKey: UInt64 { 0x3A22_6570_7974_227B }

    /// Where `topLevelType`'s value lies in `bytes`.
    static func topLevelTypeRange(_ bytes: UnsafeBufferPointer<UInt8>) -> Range<Int>? {
        let quote = UInt8(ascii: "\"")
        let backslash = UInt8(ascii: "\\")
        // What a tagged event's encoding starts with, `{"type":"`, read as a word and a byte: the scan below would
        // find the same value, after judging those nine bytes one by one.
        if bytes.count > 9, let base = bytes.baseAddress,
            UnsafeRawPointer(base).loadUnaligned(as: UInt64.self) == Self.openingTypeKey, bytes[8] == quote
        {
            var end = 9
            while end < bytes.count && bytes[end] != quote {
                if bytes[end] == backslash { return nil }
                end += 1
            }
            return 9..<end
        }
        let colon = UInt8(ascii: ":")
        var depth = 0
        var index = 0
        while index < bytes.count {
            let byte = bytes[index]
            if byte == quote {
                let start = index + 1
                var end = start
                while end < bytes.count && bytes[end] != quote { end += bytes[end] == backslash ? 2 : 1 }
                let isKey = end + 1 < bytes.count && bytes[end + 1] == colon
                if depth == 1 && isKey && end - start == 4 && bytes[start] == UInt8(ascii: "t")
                    && bytes[start + 1] == UInt8(ascii: "y") && bytes[start + 2] == UInt8(ascii: "p")
                    && bytes[start + 3] == UInt8(ascii: "e")
                {
                    let valueStart = end + 3
                    guard end + 2 < bytes.count, bytes[end + 2] == quote else { return nil }
                    var valueEnd = valueStart
                    while valueEnd < bytes.count && bytes[valueEnd] != quote {
                        if bytes[valueEnd] == backslash { return nil }
                        valueEnd += 1
                    }
                    return valueStart..<min(valueEnd, bytes.count)
                }
                index = end + 1
                continue
            }
            if byte == UInt8(ascii: "{") || byte == UInt8(ascii: "[") {
                depth += 1
            } else if byte == UInt8(ascii: "}") || byte == UInt8(ascii: "]") {
                depth -= 1
            }
            index += 1
        }
        return nil
    }
}

/// What a `SessionRecorder` keeps under its `Mutex`. Not nested in the recorder and without the system's types (its
/// states are kept as `any Sendable`): the recorder's completions and waits run unspecialised for its system (only
/// `record`, through `SessionPaths`, is compiled for it), where a type that depends on the system would cost a
/// metadata lookup at every use of the lock.
@usableFromInline
struct RecorderHeld {
    @usableFromInline
    var openBatches = 0
    @usableFromInline
    var records: [JournalRecord] = []
    /// Appends made, and appends the journal confirmed: a prefix of them, since it completes in order.
    var appended: UInt64 = 0
    var journaled: UInt64 = 0
    /// The first failed append's error; once set, nothing more is appended.
    var failure: JournalError?
    /// Set by `seal`: an append from then on is dropped, and fails the session's waits with `sealed`.
    var sealed = false
    /// A waiting answer with the append count it needs confirmed. A struct, not a tuple: an array of tuples holds
    /// the closure re-wrapped for its generic storage, an allocation per wait.
    struct Waiter {
        let through: UInt64
        let notice: Notice

        init(through: UInt64, notify: @escaping @Sendable (JournalError?) -> Void) {
            self.through = through
            self.notice = .notify(notify)
        }

        init(through: UInt64, notice: Notice) {
            self.through = through
            self.notice = notice
        }
    }
    /// The waiters an append's outcome releases, and the failure they are told (nil: journaled). A struct outside
    /// the generic recorder, not a tuple: a tuple of them was copied and destroyed through the runtime's generic tuple
    /// witnesses.
    struct Settled {
        var one: Waiter? = nil
        var ready: [Waiter] = []
        var failure: JournalError? = nil
    }
    /// What a waiter is told: a closure, or a post's answer held as its two parts, the completion and the snapshot
    /// it answers with, so that a durable post's wait makes no closure of its own (an allocation a post).
    enum Notice {
        case notify(@Sendable (JournalError?) -> Void)
        case answer(@Sendable (Result<SessionSnapshot, APIError>) -> Void, SessionSnapshot)
    }
    /// A wait for a step still held, with that step's revision.
    struct Parked {
        let revision: UInt64
        let notify: @Sendable (JournalError?) -> Void
    }
    /// Waiting answers, in the order they were added (so by `through`, which only grows).
    var waiters: [Waiter] = []
    /// Waits for a step whose records are not appended yet (held in an open batch): each becomes a waiter once
    /// `last` reaches its revision.
    var parked: [Parked] = []
    /// The state (a `System.State`) and revision of the last step whose records were appended, and of the last step
    /// held: what a passivation snapshots.
    @usableFromInline
    var last: StepState?
    @usableFromInline
    var heldLast: StepState?

    /// A step's state (a `System.State`) and revision. Structs, not tuples: the compiler copies and destroys them
    /// with code of its own, where a tuple holding an existential went through the runtime's generic tuple witnesses
    /// on every post.
    @usableFromInline
    struct StepState {
        @usableFromInline var state: any Sendable
        @usableFromInline var revision: UInt64
        @usableFromInline
        init(state: any Sendable, revision: UInt64) {
            self.state = state
            self.revision = revision
        }
    }
}
