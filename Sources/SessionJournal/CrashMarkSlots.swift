import Synchronization

/// Which slots of a crash-marks file are free: handed out once per thread, on the thread's first mark, and back when
/// the thread exits. The slots holding marks a dead process left stay out until `CrashMarks.clearLeftBehind()`.
///
/// Concurrency: any thread; a `Mutex`, taken only on a thread's first mark, at its exit and at the clearing, never on
/// the path of an `enter` or a `leave`.
final class CrashMarkSlots: Sendable {
    private struct State {
        /// The next slot never handed out.
        var next = 0
        /// Slots handed out before and given back.
        var free: [Int] = []
        /// Slots holding the marks a dead process left.
        var reserved: Set<Int>
        /// Threads that found no free slot (they mark nothing).
        var refused = 0
    }

    private let state: Mutex<State>
    private let count: Int

    init(count: Int, reserved: Set<Int>) {
        self.count = count
        state = Mutex(State(reserved: reserved))
    }

    /// A free slot, nil when every slot is taken (the caller then marks nothing).
    func take() -> Int? {
        state.withLock { state in
            if let index = state.free.popLast() { return index }
            while state.next < count {
                let index = state.next
                state.next += 1
                if !state.reserved.contains(index) { return index }
            }
            state.refused += 1
            return nil
        }
    }

    /// Gives `index` back (its thread exited, having cleared it).
    func give(_ index: Int) {
        state.withLock { $0.free.append(index) }
    }

    /// The reserved slots, which are free from now on; the caller clears them first.
    func unreserve() -> [Int] {
        state.withLock { state in
            let indices = state.reserved.sorted()
            state.reserved = []
            state.free += indices.filter { $0 < state.next }
            return indices
        }
    }

    /// How many threads found no free slot.
    var refused: Int { state.withLock { $0.refused } }
}
