import Dispatch
import FeedbackLoop
import Synchronization
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// An offloaded loop (issue 31, item 2: reduces too slow for a server thread): no caller's thread runs its steps,
/// and a reduce in progress holds up neither senders nor readers.
@Suite(.timeLimit(.minutes(1)))
struct OffloadTests {
    /// A reducer that blocks on event 0 until the gate opens (at most 10 s, so a failure cannot hang the run).
    final class Gate: Sendable {
        let entered = DispatchSemaphore(value: 0)
        let open = DispatchSemaphore(value: 0)
        /// The thread each event was reduced on.
        let reducerThreads = Mutex<[Int: UInt]>([:])

        func reduce(_ state: inout [Int], _ event: Int) {
            reducerThreads.withLock { $0[event] = Self.thread }
            if event == 0 {
                entered.signal()
                _ = open.wait(timeout: .now() + .seconds(10))
            }
            state.append(event)
        }

        static var thread: UInt { UInt(bitPattern: Int(bitPattern: pthread_self())) }
    }

    @Test func aSlowReduceHoldsUpNeitherTheSenderNorReadersNorOtherSenders() async {
        let gate = Gate()
        let loop = Loop<[Int], Int>(initial: [], reduce: { gate.reduce(&$0, $1) })
        loop.offload(to: nil)
        #expect(loop.isOffloaded)
        let sender = Gate.thread
        loop.send(0)
        // The send returned with the reduce still to come or blocked elsewhere: it ran in a task.
        #expect(gate.entered.wait(timeout: .now() + .seconds(10)) == .success)
        // While the reduce is blocked: reads answer with the last state, sends queue, a conditional send is stale.
        #expect(loop.state == [])
        #expect(loop.revision == 0)
        loop.send(1)
        loop.send(contentsOf: [2, 3]) { _ in }
        let matched = loop.send(contentsOf: [9], ifRevision: 0) { _ in }
        #expect(!matched)
        gate.open.signal()
        for await state in loop.states where state.count == 4 { break }
        #expect(loop.state == [0, 1, 2, 3])
        #expect(loop.revision == 4)
        // The sender was blocked in `entered.wait` while event 0 was reduced: another thread reduced it.
        #expect(gate.reducerThreads.withLock { $0[0] } != sender)
        loop.stop()
    }

    @Test func anOffloadedLoopKeepsItsFeedbacksAndOrder() async {
        let loop = Loop<[Int], Int>(
            initial: [],
            reduce: { $0.append($1) },
            feedbacks: [
                .steps { state, event, sink in if let event, event < 100, event % 10 == 0 { sink.send(event + 1) } }
            ]
        )
        loop.offload(to: nil)
        for value in stride(from: 0, to: 100, by: 10) { loop.send(value) }
        for await state in loop.states where state.count == 20 { break }
        // Each feedback event is reduced right behind what was queued before it, as on a loop that is not offloaded.
        let state = loop.state
        #expect(state.count == 20)
        #expect(Set(state) == Set((0..<10).flatMap { [$0 * 10, $0 * 10 + 1] }))
        for value in stride(from: 0, to: 100, by: 10) {
            let index = state.firstIndex(of: value)!
            #expect(state.firstIndex(of: value + 1)! > index)
        }
        loop.stop()
    }
}
