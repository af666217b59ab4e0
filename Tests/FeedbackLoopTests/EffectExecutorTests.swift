import Dispatch
import FeedbackLoop
import Synchronization
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A loop's effect executor (issue 31: a host marks whose code runs on a thread, effects' async parts included): what
/// an effect runs after its first suspension runs there, for every kind of feedback.
@Suite(.timeLimit(.minutes(1)))
struct EffectExecutorTests {
    /// Runs each job on a queue of its own, noting which thread ran inside it, as a host's marking executor would.
    final class Marking: TaskExecutor {
        private let queue = DispatchQueue(label: "EffectExecutorTests.marking", attributes: .concurrent)
        private let inside = Mutex<Set<UInt>>([])
        let jobs = Atomic<Int>(0)

        func enqueue(_ job: consuming ExecutorJob) {
            let job = UnownedJob(job)
            let executor = asUnownedTaskExecutor()
            jobs.add(1, ordering: .relaxed)
            queue.async { [self] in
                let thread = Self.thread
                inside.withLock { _ = $0.insert(thread) }
                job.runSynchronously(on: executor)
                inside.withLock { _ = $0.remove(thread) }
            }
        }

        /// Whether the calling thread is running one of this executor's jobs.
        var isCurrent: Bool { inside.withLock { $0.contains(Self.thread) } }

        static var thread: UInt { UInt(bitPattern: Int(bitPattern: pthread_self())) }
    }

    @Test func anEffectsCodeAfterItsFirstSuspensionRunsOnTheLoopsEffectExecutor() async {
        let marking = Marking()
        let after = Recorder<Bool>()
        // A suspension for certain: the gate opens only after `send` returned, so the effect waits for it (a short
        // sleep may be over before the task finished suspending, and then the task goes on where it was).
        let (gate, opener) = AsyncStream.makeStream(of: Void.self)
        let feedback = Feedback<TestState, TestEvent>.react(request: \.request) { request in
            for await _ in gate { break }
            after.append(marking.isCurrent)
            return .loaded(request)
        }
        let loop = Loop(initial: TestState(), reduce: reduceTest, feedbacks: [feedback], effectExecutor: marking)
        loop.send(.setRequest(4))
        opener.yield()
        let state = await firstState(of: loop) { $0.loaded == [4] }
        #expect(state?.loaded == [4])
        #expect(after.all == [true])
        #expect(marking.jobs.load(ordering: .relaxed) >= 1)
        loop.stop()
    }

    @Test func aCustomFeedbacksLaterJobsRunOnTheLoopsEffectExecutor() async {
        let marking = Marking()
        let after = Recorder<Bool>()
        let (gate, opener) = AsyncStream.makeStream(of: Void.self)
        let feedback = Feedback<TestState, TestEvent>.custom { states in
            states.compactMap { state -> TestEvent? in
                guard let request = state.request, !state.loaded.contains(request) else { return nil }
                for await _ in gate { break }
                after.append(marking.isCurrent)
                return .loaded(request)
            }
        }
        let loop = Loop(initial: TestState(), reduce: reduceTest, feedbacks: [feedback], effectExecutor: marking)
        loop.send(.setRequest(7))
        opener.yield()
        let state = await firstState(of: loop) { $0.loaded.contains(7) }
        #expect(state?.loaded.first == 7)
        #expect(after.all.first == true)
        loop.stop()
    }
}
