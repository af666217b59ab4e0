import Synchronization

/// A stream the loop feeds one of its effects: a `custom` feedback's states, a keyed effect's request updates.
///
/// Without an effect tracker it is a plain `AsyncStream` and its continuation. With one, the effect's waiting for
/// the loop counts as idle, as a sleep on the clock does: an effect that asks for the next element while none is
/// buffered tells the tracker it ended, and the yield that gives it one (or the end of the stream) tells it that
/// it started again, before the element is handed over. So `TestClock.settled()` neither waits for effects that
/// only wait for the loop, nor answers while an element is on its way to one. An element is counted as buffered
/// before it is yielded (and uncounted when the stream dropped or refused it), so a count is high for an instant at
/// most, never low.
///
/// Concurrency: `yield` and `finish` are called by the loop's engine owner; the stream is iterated by the effect's
/// task. The counts sit behind a `Mutex`, which is never held while yielding (the effect may run inline then).
final class LoopFeed<Element: Sendable>: Sendable {
    private struct Counts {
        var pending = 0
        var waiting = false
    }

    /// The consuming task's iterator, touched only by that task.
    private final class Source: @unchecked Sendable {
        var iterator: AsyncStream<Element>.Iterator

        init(_ iterator: AsyncStream<Element>.Iterator) { self.iterator = iterator }
    }

    private let counts = Mutex(Counts())
    private let tracker: (any EffectTracking)?
    private let continuation: AsyncStream<Element>.Continuation
    private let inner: AsyncStream<Element>

    /// A feed whose waits `tracker` is told of (none without one).
    init(
        tracker: (any EffectTracking)?,
        bufferingPolicy: AsyncStream<Element>.Continuation.BufferingPolicy = .unbounded
    ) {
        (inner, continuation) = AsyncStream.makeStream(of: Element.self, bufferingPolicy: bufferingPolicy)
        self.tracker = tracker
    }

    /// The stream for the effect; make it once.
    func makeStream() -> AsyncStream<Element> {
        guard tracker != nil else { return inner }
        let source = Source(inner.makeAsyncIterator())
        return AsyncStream(unfolding: { [self] in await next(from: source) })
    }

    /// Hands `element` to the effect.
    func yield(_ element: Element) {
        guard let tracker else {
            continuation.yield(element)
            return
        }
        let resumed = counts.withLock { counts -> Bool in
            counts.pending += 1
            defer { counts.waiting = false }
            return counts.waiting
        }
        if resumed { tracker.effectStarted() }
        if case .enqueued = continuation.yield(element) { return }
        counts.withLock { $0.pending -= 1 }
    }

    /// Ends the stream (the effect sees its end after the buffered elements).
    func finish() {
        continuation.finish()
    }

    private func next(from source: Source) async -> Element? {
        if let tracker {
            let waits = counts.withLock { counts -> Bool in
                guard counts.pending <= 0 else { return false }
                counts.waiting = true
                return true
            }
            if waits { tracker.effectEnded() }
        }
        let element = await source.iterator.next()
        let resumed = counts.withLock { counts -> Bool in
            if element != nil { counts.pending -= 1 }
            defer { counts.waiting = false }
            return counts.waiting
        }
        if resumed { tracker?.effectStarted() }
        return element
    }
}
