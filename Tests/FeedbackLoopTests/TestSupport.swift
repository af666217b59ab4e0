import FeedbackLoop
import Foundation
import Synchronization

/// The events of the test system.
enum TestEvent: Sendable, Equatable {
    case setRequest(Int?)
    case loaded(Int)
    case add(Int)
    case marker
    case noop
    case failed(String)
}

/// The state of the test system.
struct TestState: Sendable, Equatable {
    var request: Int?
    var loaded: [Int] = []
    var count = 0
    var markers = 0
    var errors: [String] = []
}

func reduceTest(_ state: inout TestState, _ event: TestEvent) {
    switch event {
    case .setRequest(let request): state.request = request
    case .loaded(let value): state.loaded.append(value)
    case .add(let value): state.count += value
    case .marker: state.markers += 1
    case .noop: break
    case .failed(let message): state.errors.append(message)
    }
}

/// A thread-safe list of what happened, in order.
final class Recorder<Item: Sendable>: Sendable {
    private let items = Mutex<[Item]>([])

    func append(_ item: Item) { items.withLock { $0.append(item) } }
    var all: [Item] { items.withLock { $0 } }
    var count: Int { items.withLock { $0.count } }
}

/// A one-shot signal that async code can wait for; waiting ignores task cancellation.
final class Gate: Sendable {
    private let core = Mutex<(open: Bool, waiters: [CheckedContinuation<Void, Never>])>((false, []))

    func open() {
        let waiters = core.withLock { core -> [CheckedContinuation<Void, Never>] in
            core.open = true
            defer { core.waiters = [] }
            return core.waiters
        }
        for waiter in waiters { waiter.resume() }
    }

    var isOpen: Bool { core.withLock { $0.open } }

    func wait() async {
        await withCheckedContinuation { continuation in
            let ready = core.withLock { core -> Bool in
                if core.open { return true }
                core.waiters.append(continuation)
                return false
            }
            if ready { continuation.resume() }
        }
    }

    /// Blocks the calling (non-pool) thread until open, for at most `seconds`.
    func block(seconds: Double = 20) -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while !isOpen {
            if Date() > deadline { return false }
            usleep(200)
        }
        return true
    }
}

/// A mutable slot shared with Sendable closures (e.g. a loop that a feedback must reach).
final class Box<Value: Sendable>: Sendable {
    private let slot: Mutex<Value>
    init(_ value: Value) { slot = Mutex(value) }
    var value: Value {
        get { slot.withLock { $0 } }
        set { slot.withLock { $0 = newValue } }
    }
}

/// Runs `body` on a new thread (not a pool thread, so it may block) and returns when it finished.
func onThread(_ body: @escaping @Sendable () -> Void) async {
    await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
        let thread = Thread {
            body()
            continuation.resume()
        }
        thread.start()
    }
}

/// The first state of `loop` that satisfies `predicate` (the current one included).
@discardableResult
func firstState<State: Sendable, Event: Sendable>(
    of loop: Loop<State, Event>,
    where predicate: @escaping @Sendable (State) -> Bool
) async -> State? {
    for await state in loop.states where predicate(state) { return state }
    return nil
}

/// A sequence that emits `events` and then, when asked for more, reports through `delivered` that the last one
/// was handed to the loop before it ends.
/// With `release`, it first waits for that gate (ignoring cancellation, like an effect that does not cooperate).
struct SignallingSequence<Element: Sendable>: AsyncSequence, Sendable {
    let events: [Element]
    let delivered: Gate
    var release: Gate?

    struct AsyncIterator: AsyncIteratorProtocol {
        var remaining: [Element]
        let delivered: Gate
        var release: Gate?

        mutating func next() async -> Element? {
            if let gate = release {
                release = nil
                await gate.wait()
            }
            if remaining.isEmpty {
                delivered.open()
                return nil
            }
            return remaining.removeFirst()
        }
    }

    func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(remaining: events, delivered: delivered, release: release)
    }
}

/// An effect's body that runs until its task is cancelled: opens `started` first, calls `onCancel` when cancelled.
func runUntilCancelled(started: Gate? = nil, onCancel: @escaping @Sendable () -> Void) async {
    await withTaskCancellationHandler {
        started?.open()
        await Gate().wait()
    } onCancel: {
        onCancel()
    }
}
