import FeedbackLoop
import Foundation
import Hummingbird
import Synchronization
import Systems

/// One counter session of the peer: the root package's `Loop` running `CounterSystem.reduce`, and the SSE
/// subscribers it fans out to.
///
/// Concurrency contract: the loop serialises its own steps (see `Loop`); its one observer encodes each new state
/// once and hands the frame to every subscriber's `AsyncStream` (unbounded, so a subscriber sees every state).
/// `fanOut` (a `Mutex`) guards the last frame and the subscriber table; frames are yielded outside the lock,
/// in step order, because the loop calls its observer one step at a time.
final class PeerSession: Sendable {
    /// The session's loop: the same engine and reducer FeedbackHost runs.
    let loop: Loop<CounterSystem.State, CounterSystem.Event>
    /// The history's epoch, random per session: the first half of every cursor.
    let epoch: UInt64
    private let fanOut = Mutex(FanOut())

    private struct FanOut {
        var lastFrame = ByteBuffer()
        var nextSubscriber = 0
        var subscribers: [Int: AsyncStream<ByteBuffer>.Continuation] = [:]
    }

    init() {
        epoch = UInt64.random(in: 1...UInt64(UInt32.max))
        loop = Loop(initial: CounterSystem.State(), reduce: CounterSystem.reduce)
        loop.observe { [weak self] step in self?.publish(step) }
    }

    deinit {
        loop.stop()
    }

    /// The JSON of a state, encoded as FeedbackHost encodes it (JSONEncoder, sorted keys).
    static func encode(_ state: CounterSystem.State) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        guard let data = try? encoder.encode(state) else { preconditionFailure("a counter state failed to encode") }
        return String(decoding: data, as: UTF8.self)
    }

    /// The `{"rev","cursor","state"}` body of a step.
    func snapshotBody(_ step: Step<CounterSystem.State, CounterSystem.Event>) -> String {
        #"{"rev":\#(step.revision),"cursor":"\#(epoch)-\#(step.revision)","state":\#(Self.encode(step.state))}"#
    }

    /// A new subscriber's frames: a comment and `retry:`, the current snapshot, then one snapshot per new state.
    func subscribe() -> AsyncStream<ByteBuffer> {
        let (stream, continuation) = AsyncStream.makeStream(of: ByteBuffer.self, bufferingPolicy: .unbounded)
        continuation.yield(ByteBuffer(string: ": hummingbird peer\nretry: 3000\n\n"))
        let id = fanOut.withLock { fanOut in
            let id = fanOut.nextSubscriber
            fanOut.nextSubscriber += 1
            fanOut.subscribers[id] = continuation
            continuation.yield(fanOut.lastFrame)
            return id
        }
        continuation.onTermination = { [weak self] _ in
            _ = self?.fanOut.withLock { $0.subscribers.removeValue(forKey: id) }
        }
        return stream
    }

    /// Called by the loop for each step, in order: encodes the frame once and yields it to every subscriber.
    private func publish(_ step: Step<CounterSystem.State, CounterSystem.Event>) {
        let rev = step.revision
        let frame = ByteBuffer(
            string:
                "event: snapshot\nid: \(epoch)-\(rev)\ndata: {\"rev\":\(rev),\"state\":\(Self.encode(step.state))}\n\n"
        )
        let subscribers = fanOut.withLock { fanOut in
            fanOut.lastFrame = frame
            return Array(fanOut.subscribers.values)
        }
        for subscriber in subscribers { subscriber.yield(frame) }
    }
}
