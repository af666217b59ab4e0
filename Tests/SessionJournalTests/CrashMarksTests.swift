import Dispatch
import Foundation
import Glibc
import Synchronization
import Testing

@testable import SessionJournal

/// `CrashMarks` within one process: a `close` without the `leave` stands for a process that died inside hosted code.
/// The marks left set are read back by the next `open` (and again until cleared), the ones left are not; each thread
/// has its own slot, gives it back when it exits, and marks nothing when none is free.
@Suite(.timeLimit(.minutes(1))) struct CrashMarksTests {
    @Test func marksLeftSetAreReadBackByTheNextOpenUntilCleared() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let (a, b, c) = (JournalFixtures.id(1), JournalFixtures.id(2), JournalFixtures.id(3))
        let marks = try CrashMarks.open(directory: directory.path, catchingFaults: false)
        #expect(marks.leftBehind.isEmpty)
        #expect(marks.path == directory.file(CrashMarks.fileName))
        let before = Int64(Date().timeIntervalSince1970 * 1000)
        marks.enter(session: b, kind: .reduce, detail: "tick")
        marks.leave()
        let other = try ParkedThread { marks.enter(session: c, kind: .feedback, detail: "load page") }
        defer { other.finish() }
        marks.enter(session: a, kind: .reduce, detail: "add")
        marks.close()

        let next = try CrashMarks.open(directory: directory.path, catchingFaults: false)
        let found = next.leftBehind.sorted { $0.session < $1.session }
        #expect(found.map(\.session) == [a, c])
        #expect(found.map(\.kind) == [.reduce, .feedback])
        #expect(found.map(\.detail) == ["add", "load page"])
        #expect(found.allSatisfy { $0.signal == nil })
        // The coarse clock may lag the precise one by a tick.
        #expect(found.allSatisfy { $0.enteredAt >= before - 50 && $0.enteredAt <= before + 60_000 })
        #expect(next.signalLeftBehind == nil)
        // Not dealt with (this process dies too): the next start reads them again, besides its own.
        next.enter(session: b, kind: .activation, detail: "")
        next.close()

        let third = try CrashMarks.open(directory: directory.path, catchingFaults: false)
        #expect(Set(third.leftBehind.map(\.session)) == [a, b, c])
        third.clearLeftBehind()
        third.close()
        let fourth = try CrashMarks.open(directory: directory.path, catchingFaults: false)
        defer { fourth.close() }
        #expect(fourth.leftBehind.isEmpty)
    }

    /// A reduce's mark writes its revision's digits straight into the slot: read back as `#` and the decimal.
    @Test(arguments: [0, 7, 10, 99, 1_000_000, UInt64.max]) func aRevisionIsMarkedInDecimal(revision: UInt64) throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let marks = try CrashMarks.open(directory: directory.path, catchingFaults: false)
        // A longer detail first: the shorter one that replaces it must not keep its tail.
        marks.enter(session: JournalFixtures.id(2), kind: .activation, detail: "revision 123456789012345678901234")
        marks.enter(session: JournalFixtures.id(1), kind: .reduce, revision: revision)
        marks.close()
        let next = try CrashMarks.open(directory: directory.path, catchingFaults: false)
        defer { next.close() }
        #expect(next.leftBehind.map(\.detail) == ["#\(revision)"])
        #expect(next.leftBehind.map(\.session) == [JournalFixtures.id(1)])
    }

    @Test func aRunThatLeavesEveryMarkLeavesNothing() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let marks = try CrashMarks.open(directory: directory.path, catchingFaults: false)
        for number in 1...100 {
            marks.marking(session: JournalFixtures.id(number), kind: .reduce, detail: "add") {}
        }
        let other = try ParkedThread {
            marks.enter(session: JournalFixtures.id(1), kind: .activation, detail: "")
            marks.leave()
        }
        defer { other.finish() }
        // A throwing body leaves its mark too.
        struct Refused: Error {}
        #expect(throws: Refused.self) {
            try marks.marking(session: JournalFixtures.id(2), kind: .reduce, detail: "add") { throw Refused() }
        }
        marks.close()
        let next = try CrashMarks.open(directory: directory.path, catchingFaults: false)
        defer { next.close() }
        #expect(next.leftBehind.isEmpty)
    }

    /// An activation's replayed reduces nest inside its mark: the innermost's fields stand, and the thread is inside
    /// until the outermost is left.
    @Test func marksNest() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let id = JournalFixtures.id(1)
        let marks = try CrashMarks.open(directory: directory.path, catchingFaults: false)
        marks.enter(session: id, kind: .activation, detail: "restore")
        marks.enter(session: id, kind: .reduce, detail: "add")
        marks.leave()
        marks.close()
        let inside = try CrashMarks.open(directory: directory.path, catchingFaults: false)
        #expect(inside.leftBehind.map(\.detail) == ["add"])
        inside.clearLeftBehind()
        inside.enter(session: id, kind: .activation, detail: "restore")
        inside.enter(session: id, kind: .reduce, detail: "add")
        inside.leave()
        inside.leave()
        inside.leave()  // one too many changes nothing
        inside.close()
        let outside = try CrashMarks.open(directory: directory.path, catchingFaults: false)
        defer { outside.close() }
        #expect(outside.leftBehind.isEmpty)
    }

    /// Threads take their own slots; a thread that finds none free marks nothing and is counted; a thread that
    /// exits gives its slot back (and its mark with it).
    @Test func slotsArePerThreadAndRunOutWithoutWaiting() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let marks = try CrashMarks.open(directory: directory.path, slots: 2, catchingFaults: false)
        let threads = try (1...3).map { number in
            try ParkedThread { marks.enter(session: JournalFixtures.id(number), kind: .reduce, detail: "t\(number)") }
        }
        #expect(marks.threadsUnmarked == 1)
        // The threads exit inside their marks: their slots are cleared and free again.
        for thread in threads { thread.finish() }
        let later = try ParkedThread { marks.enter(session: JournalFixtures.id(9), kind: .reduce, detail: "later") }
        defer { later.finish() }
        #expect(marks.threadsUnmarked == 1)
        marks.close()
        let next = try CrashMarks.open(directory: directory.path, slots: 2, catchingFaults: false)
        defer { next.close() }
        #expect(next.leftBehind.map(\.session) == [JournalFixtures.id(9)])
    }

    @Test func oneProcessHoldsTheFile() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let marks = try CrashMarks.open(directory: directory.path, catchingFaults: false)
        #expect(throws: JournalError.self) { try CrashMarks.open(directory: directory.path, catchingFaults: false) }
        do {
            _ = try CrashMarks.open(directory: directory.path, catchingFaults: false)
        } catch {
            #expect(error.code == .locked)
        }
        marks.close()
        let again = try CrashMarks.open(directory: directory.path, catchingFaults: false)
        again.close()
    }

    @Test func disabledMarksNothing() throws {
        let marks = CrashMarks.disabled
        #expect(!marks.isEnabled)
        #expect(marks.path == nil)
        marks.enter(session: JournalFixtures.id(1), kind: .reduce, detail: "add")
        marks.leave()
        #expect(marks.marking(session: JournalFixtures.id(1), kind: .reduce, detail: "add") { 7 } == 7)
        marks.clearLeftBehind()
        marks.close()
        #expect(marks.leftBehind.isEmpty)
        #expect(marks.threadsUnmarked == 0)
    }

    /// Ids and details longer than a slot holds are cut (a cut inside a character reads as U+FFFD).
    @Test func longTextIsCut() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let marks = try CrashMarks.open(directory: directory.path, catchingFaults: false)
        marks.enter(
            session: String(repeating: "s", count: 100),
            kind: .feedback,
            detail: String(repeating: "d", count: 100)
        )
        marks.close()
        let next = try CrashMarks.open(directory: directory.path, catchingFaults: false)
        defer { next.close() }
        #expect(next.leftBehind.first?.session == String(repeating: "s", count: CrashMarks.sessionBytes))
        #expect(next.leftBehind.first?.detail == String(repeating: "d", count: CrashMarks.detailBytes))
    }

    /// A file of another slot count keeps its marks in the new layout; a file that is not a marks file starts afresh.
    @Test func aFileOfAnotherLayoutKeepsItsMarksAndGarbageStartsAfresh() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let id = JournalFixtures.id(1)
        let small = try CrashMarks.open(directory: directory.path, slots: 4, catchingFaults: false)
        let other = try ParkedThread { small.enter(session: JournalFixtures.id(2), kind: .reduce, detail: "x") }
        defer { other.finish() }
        small.enter(session: id, kind: .activation, detail: "restore")
        small.close()
        let large = try CrashMarks.open(directory: directory.path, catchingFaults: false)
        #expect(Set(large.leftBehind.map(\.session)) == [id, JournalFixtures.id(2)])
        large.close()
        let path = directory.file(CrashMarks.fileName)
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)).count == 128 + 256 * 128)
        let again = try CrashMarks.open(directory: directory.path, catchingFaults: false)
        #expect(Set(again.leftBehind.map(\.session)) == [id, JournalFixtures.id(2)])
        again.close()

        try Data(repeating: 0xA5, count: 5000).write(to: URL(fileURLWithPath: path))
        let fresh = try CrashMarks.open(directory: directory.path, catchingFaults: false)
        defer { fresh.close() }
        #expect(fresh.leftBehind.isEmpty)
    }

    /// The cost of an `enter` and a `leave` on a thread that holds a slot; run with `CRASH_MARKS_BENCH=1` (ideally
    /// built with `-c release`). No threshold: speed is measured, not tested.
    @Test(.enabled(if: ProcessInfo.processInfo.environment["CRASH_MARKS_BENCH"] != nil))
    func enterAndLeaveCost() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let marks = try CrashMarks.open(directory: directory.path)
        defer { marks.close() }
        let id = JournalFixtures.id(1)
        let rounds = 10_000_000
        marks.enter(session: id, kind: .reduce, detail: "increment")
        marks.leave()
        let start = ContinuousClock.now
        for _ in 0..<rounds {
            marks.enter(session: id, kind: .reduce, detail: "increment")
            marks.leave()
        }
        let elapsed = ContinuousClock.now - start
        let nanoseconds = Double(elapsed.components.seconds) * 1e9 + Double(elapsed.components.attoseconds) / 1e9
        print("CrashMarks enter+leave: \(nanoseconds / Double(rounds)) ns per pair")
    }
}

/// A thread of its own (not one of a pool) that runs `body` and then waits, alive, until `finish()`: its marks stay as
/// a dying process would leave them (a thread that exits gives its slot back, cleared).
final class ParkedThread: Sendable {
    private let release = DispatchSemaphore(value: 0)
    private let thread: Mutex<pthread_t?>

    /// Starts the thread and returns once `body` ran.
    init(_ body: @escaping @Sendable () -> Void) throws {
        final class Start: Sendable {
            let body: @Sendable () -> Void
            let ran = DispatchSemaphore(value: 0)
            let release: DispatchSemaphore
            init(_ body: @escaping @Sendable () -> Void, release: DispatchSemaphore) {
                self.body = body
                self.release = release
            }
        }
        let start = Start(body, release: release)
        var thread = pthread_t()
        let made = pthread_create(
            &thread,
            nil,
            { raw in
                let start = Unmanaged<Start>.fromOpaque(raw!).takeRetainedValue()
                start.body()
                start.ran.signal()
                start.release.wait()
                return nil
            },
            Unmanaged.passRetained(start).toOpaque()
        )
        try #require(made == 0)
        self.thread = Mutex(thread)
        start.ran.wait()
    }

    /// Lets the thread end and waits for it.
    func finish() {
        guard let thread = self.thread.withLock({ $0.take() }) else { return }
        release.signal()
        pthread_join(thread, nil)
    }
}
