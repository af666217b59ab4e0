import Synchronization

/// A registered observer of a loop's steps.
///
/// Concurrency: `body` and `finish` are called only by the loop's engine owner, one call at a time;
/// `isCancelled` is atomic so `Observation.cancel()` may run on any thread.
@usableFromInline
final class StepObserver<State: Sendable, Event: Sendable>: Sendable {
    @usableFromInline
    let body: @Sendable (Step<State, Event>) -> Void
    @usableFromInline
    let finish: (@Sendable () -> Void)?
    private let cancelled = Atomic<Bool>(false)

    init(body: @escaping @Sendable (Step<State, Event>) -> Void, finish: (@Sendable () -> Void)?) {
        self.body = body
        self.finish = finish
    }

    @usableFromInline
    var isCancelled: Bool { cancelled.load(ordering: .acquiring) }

    func cancel() { cancelled.store(true, ordering: .releasing) }
}

/// A handle on an observation of a loop; `cancel()` ends it. It does not end when the handle is released.
///
/// Concurrency: `cancel()` may be called from any thread; a step being delivered at that moment may still
/// reach the observer once.
public final class Observation: Sendable {
    private let onCancel: @Sendable () -> Void

    init(onCancel: @escaping @Sendable () -> Void) {
        self.onCancel = onCancel
    }

    /// Stops delivering steps to the observer.
    public func cancel() { onCancel() }
}
