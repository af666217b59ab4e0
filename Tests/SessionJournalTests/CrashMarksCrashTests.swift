import Dispatch
import Foundation
import Glibc
import Testing

@testable import SessionJournal

/// A real crash: this test binary runs itself as a child process whose one test (`childTrapsInsideAMark`, enabled by
/// `CRASH_MARKS_CHILD_DIR`) enters a mark and traps there (a force-unwrap of nil, or a stack overflow), while another
/// thread of it is inside a mark of another session. The parent waits for the child to die by the fault's signal, then
/// opens the marks: both marks are left behind, the faulting one with the signal, the bystander's without. With Swift's
/// backtracer on, it still prints its report: the fault handler hands the signal on.
@Suite(.timeLimit(.minutes(2))) struct CrashMarksCrashTests {
    static let childDirectory = "CRASH_MARKS_CHILD_DIR"
    static let childOverflows = "CRASH_MARKS_CHILD_OVERFLOWS"
    static let trapping = JournalFixtures.id(7)
    static let bystander = JournalFixtures.id(8)

    /// Swift's trap is SIGILL (`ud2`) on x86_64 and SIGTRAP (`brk`) on arm64.
    static let trapSignals: Set<Int32> = [SIGILL, SIGTRAP]

    @Test(arguments: [(false, false), (false, true), (true, false)])
    func aFaultInsideAMarkIsReadBackWithItsSignal(overflow: Bool, backtracer: Bool) throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let outcome = try Self.runChild(directory: directory.path, overflow: overflow, backtracer: backtracer)
        #expect(outcome.reason == .uncaughtSignal, "child output: \(outcome.output)")
        let expected = overflow ? [SIGSEGV] : Self.trapSignals
        #expect(expected.contains(outcome.status), "child output: \(outcome.output)")
        if backtracer { #expect(outcome.output.contains("Program crashed")) }

        let marks = try CrashMarks.open(directory: directory.path, catchingFaults: false)
        defer { marks.close() }
        let trapped = try #require(marks.leftBehind.first { $0.session == Self.trapping }, "\(outcome.output)")
        #expect(trapped.kind == .reduce)
        #expect(trapped.detail == (overflow ? "recurse" : "explode"))
        #expect(trapped.signal == outcome.status)
        let bystander = try #require(marks.leftBehind.first { $0.session == Self.bystander })
        #expect(bystander.kind == .feedback)
        #expect(bystander.detail == "wait")
        #expect(bystander.signal == nil)
        #expect(marks.leftBehind.count == 2)
        #expect(marks.signalLeftBehind == outcome.status)
    }

    /// The child's part: does nothing unless the parent set `CRASH_MARKS_CHILD_DIR`.
    @Test(.enabled(if: ProcessInfo.processInfo.environment[childDirectory] != nil))
    func childTrapsInsideAMark() throws {
        let directory = try #require(ProcessInfo.processInfo.environment[Self.childDirectory])
        let marks = try CrashMarks.open(directory: directory)
        marks.marking(session: JournalFixtures.id(9), kind: .reduce, detail: "fine") {}
        let bystander = try ParkedThread { marks.enter(session: Self.bystander, kind: .feedback, detail: "wait") }
        _ = bystander
        if ProcessInfo.processInfo.environment[Self.childOverflows] != nil {
            marks.enter(session: Self.trapping, kind: .reduce, detail: "recurse")
            print("child: overflowing the stack now")
            _ = Self.recurse(1)
        } else {
            marks.enter(session: Self.trapping, kind: .reduce, detail: "explode")
            // A force-unwrap of nil, as a reducer's bug would have it (from the environment, so no compiler sees it).
            let missing = Int(ProcessInfo.processInfo.environment["CRASH_MARKS_CHILD_MISSING"] ?? "none")
            print("child: trapping now")
            _ = missing!
        }
        marks.leave()
    }

    /// Recursion without end (as far as the compiler can tell it might end), each frame holding some stack.
    @inline(never)
    static func recurse(_ depth: Int) -> Int {
        var frame = (depth, depth, depth, depth, depth, depth, depth, depth)
        let sum = withUnsafeBytes(of: &frame) { Int($0[0]) }
        return depth == Int.max ? sum : recurse(depth + 1) + sum
    }

    struct Outcome {
        var reason: Process.TerminationReason
        var status: Int32
        var output: String
    }

    /// Runs this test binary's `childTrapsInsideAMark` in a child process and waits for it to end, at most a minute
    /// (then kills it by its pid).
    static func runChild(directory: String, overflow: Bool, backtracer: Bool) throws -> Outcome {
        let process = Process()
        process.executableURL = URL(
            fileURLWithPath: try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")
        )
        process.arguments = ["--testing-library", "swift-testing", "--filter", "childTrapsInsideAMark"]
        var environment = ProcessInfo.processInfo.environment
        environment[childDirectory] = directory
        environment[childOverflows] = overflow ? "1" : nil
        environment["SWIFT_BACKTRACE"] = backtracer ? "enable=yes,interactive=no,symbolicate=off" : "enable=no"
        process.environment = environment
        let log = directory + "/child.log"
        _ = FileManager.default.createFile(atPath: log, contents: nil)
        let output = try FileHandle(forWritingTo: URL(fileURLWithPath: log))
        defer { try? output.close() }
        process.standardOutput = output
        process.standardError = output
        let ended = DispatchSemaphore(value: 0)
        process.terminationHandler = { _ in ended.signal() }
        try process.run()
        if ended.wait(timeout: .now() + .seconds(60)) == .timedOut {
            kill(process.processIdentifier, SIGKILL)
            ended.wait()
        }
        let text = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
        return Outcome(reason: process.terminationReason, status: process.terminationStatus, output: text)
    }
}
