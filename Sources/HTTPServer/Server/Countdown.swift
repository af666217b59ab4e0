import Synchronization

/// Counts down from a start value shared by several threads; exactly one caller sees it reach zero.
///
/// Thread-safe: an atomic integer.
final class Countdown: Sendable {
    private let remaining: Atomic<Int>

    init(_ count: Int) {
        remaining = Atomic(count)
    }

    /// Takes one off; true for the caller that took the last one.
    func decrement() -> Bool {
        remaining.subtract(1, ordering: .acquiringAndReleasing).newValue == 0
    }
}
