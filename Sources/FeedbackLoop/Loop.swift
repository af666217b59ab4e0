/// A running feedback system: a state, a pure reducer and feedbacks that watch the state and emit events.
///
/// Concurrency contract: one small lock (`engine`, an ``EngineLock`` word) guards the core: the state, the
/// revision, the event queue, the observer list and `stopped`; the same word carries the `owned` flag.
/// Whoever claims the engine (sets `owned`) is its owner: it runs the queue, reducing events one at a time under
/// the lock and notifying feedbacks, observers and completions *outside* it, in order, on its own thread. Every
/// other sender only enqueues. So `send(_:)` from any thread is safe; a send from inside a feedback, an effect's
/// synchronous start, an observer or a completion is queued, never reduced reentrantly; reading `state` or sending
/// from there cannot deadlock. Feedback reactors are touched only by the engine's owner.
/// The reducer runs under the lock: it must be pure, short, and must not call back into the loop.
///
/// Ordering: every feedback sees the initial state before any event is reduced; each state reaches the feedbacks
/// in their order, and what they emit while it does (synchronously, or from an effect or a `custom` stream before
/// its first real suspension) is queued in that order behind what was queued before: breadth-first FIFO. See
/// docs/ARCHITECTURE.md, "Ordering guarantees".
///
/// Bounded synchronous work: one call (`init`, `send`, an effect's event) runs at most `synchronousSteps` steps on
/// its thread. When events are still queued then (a feedback that answers every state without suspending, an
/// effect that floods), the engine stays owned and the rest of the queue continues in a task, `synchronousSteps`
/// at a time, in the same order; every other sender keeps only enqueuing meanwhile. So no caller is held by a
/// system's feedbacks for longer than that many steps, and every ordering promise above stands.
///
/// `stop()` (or deinit) cancels every running effect; events sent later are ignored.
public final class Loop<State: Sendable, Event: Sendable>: EventSink<Event>, @unchecked Sendable {
    /// Called with the step right after a batch's last event was reduced, or nil when the loop stopped first.
    public typealias Completion = @Sendable (Step<State, Event>?) -> Void

    @usableFromInline
    enum Entry: Sendable {
        case event(Event, EffectTicket?, Completion?)
        case observe(StepObserver<State, Event>)
    }

    @usableFromInline
    enum Action: Sendable {
        case idle
        case step(State, Event, UInt64, [StepObserver<State, Event>], Completion?)
        case attach(StepObserver<State, Event>, Step<State, Event>)
        case shutDown([Entry], [StepObserver<State, Event>], Step<State, Event>)
    }

    @usableFromInline
    struct Core: Sendable {
        @usableFromInline var state: State
        @usableFromInline var revision: UInt64 = 0
        @usableFromInline var stopped = false
        @usableFromInline var queue = EventQueue<Entry>()
        @usableFromInline var observers: [StepObserver<State, Event>] = []

        @usableFromInline
        init(state: State, revision: UInt64) {
            self.state = state
            self.revision = revision
        }

        @inlinable
        var step: Step<State, Event> { Step(event: nil, state: state, revision: revision) }
    }

    @usableFromInline
    let engine = EngineLock()
    // Guarded by `engine`; accessed only through `withCore`.
    @usableFromInline
    @exclusivity(unchecked)
    var core: Core
    @usableFromInline
    let reduce: @Sendable (inout State, Event) -> Void
    /// Every feedback's reactor, combined into one closure at init (a step costs one call, no array).
    @usableFromInline
    let reactors: Reactor<Event>
    /// Told when each effect starts and ends (a ``TestClock``); nil for nobody. A continuation of the queue counts
    /// as an effect too: work is under way until it ran.
    @usableFromInline
    let tracker: (any EffectTracking)?
    /// The most steps one call runs on its thread before the rest of the queue continues in a task.
    @usableFromInline
    let synchronousSteps: Int

    /// The default of `synchronousSteps`: above the largest batch a client posts to the service (100 events) and
    /// the few events a healthy system's feedbacks emit in reply, so that only a runaway ever continues in a task.
    public static var defaultSynchronousSteps: Int { 128 }

    /// Starts a loop: every feedback sees `initial` (in order) before this returns and before any event is
    /// reduced; events the feedbacks emit meanwhile are reduced next, on this thread. `revision` is the revision
    /// of `initial`: 0 for a new history, the restored revision when a history resumes. `effectTracker` is told
    /// when each effect starts and ends (a ``TestClock`` that must know when everything has settled).
    /// `synchronousSteps` bounds the steps this init (and every later call) runs on its thread: past it the rest
    /// of the queue continues in a task, in order (at least 1).
    @inlinable
    public init(
        initial: State,
        revision: UInt64 = 0,
        reduce: @escaping @Sendable (inout State, Event) -> Void,
        feedbacks: [Feedback<State, Event>] = [],
        effectTracker: (any EffectTracking)? = nil,
        synchronousSteps: Int = Loop.defaultSynchronousSteps
    ) {
        core = Core(state: initial, revision: revision)
        engine.unlock(EngineLock.owned)  // init owns the engine until its first run of the queue ends
        self.reduce = reduce
        tracker = effectTracker
        self.synchronousSteps = max(synchronousSteps, 1)
        reactors = Self.combine(feedbacks)
        super.init()
        withUnsafePointer(to: initial) { reactors(UnsafeRawPointer($0), nil, self) }
        runQueue()
    }

    /// Starts a loop with a composable ``Reducer``.
    public convenience init(initial: State, reducer: Reducer<State, Event>, feedbacks: [Feedback<State, Event>] = []) {
        self.init(initial: initial, reduce: reducer.reduce, feedbacks: feedbacks)
    }

    deinit {
        // Nobody owns the engine now: its owner holds a strong reference.
        let action = withCore { core, _ -> Action in
            if core.stopped { return .idle }
            core.stopped = true
            return .shutDown(core.queue.removeAll(), core.observers, core.step)
        }
        perform(action)
    }

    /// The current state.
    public var state: State { withCore { core, _ in core.state } }

    /// The number of events reduced so far.
    public var revision: UInt64 { withCore { core, _ in core.revision } }

    /// The current state with its revision (the step's event is nil).
    @inlinable
    public var currentStep: Step<State, Event> { withCore { core, _ in core.step } }

    /// True once `stop()` was called.
    @inlinable
    public var isStopped: Bool { withCore { core, _ in core.stopped } }

    /// Sends an external event; external events are never dropped while the loop runs.
    ///
    /// When no other thread owns the engine, the event is reduced and every feedback and observer is notified on
    /// the calling thread before this returns, and so are the events they queue meanwhile, up to
    /// `synchronousSteps` steps; otherwise it is queued behind the events already waiting.
    @inlinable
    public override func send(_ event: Event) {
        // Hot path: plain locals instead of an `Action`, so that nothing is copied through value witnesses.
        var observers: [StepObserver<State, Event>] = []
        var revision: UInt64 = 0
        let state = withCore { core, flags -> State? in
            if core.stopped { return nil }
            guard EngineLock.claim(&flags) else {
                core.queue.append(.event(event, nil, nil))
                return nil
            }
            reduce(&core.state, event)
            core.revision &+= 1
            revision = core.revision
            if !core.observers.isEmpty { observers = core.observers }
            return core.state
        }
        guard let state else { return }
        notify(state, event, revision, observers, nil)
        // Usually nothing was queued meanwhile: release the engine without taking the lock.
        if !engine.releaseIfIdle() { runQueue() }
    }

    /// Stops the loop: every running effect is cancelled, state streams finish, later sends are ignored and
    /// queued events are dropped (their completions get nil). Called from inside a step (a feedback or an
    /// observer), or while another thread owns the engine, the shutdown happens as soon as the current step ends.
    public func stop() {
        let action = withCore { core, flags -> Action in
            if core.stopped { return .idle }
            core.stopped = true
            // Owned elsewhere: the owner shuts down when its step ends; `pending` keeps it from leaving quietly.
            guard EngineLock.claim(&flags) else { return .idle }
            let observers = core.observers
            core.observers = []
            return .shutDown(core.queue.removeAll(), observers, core.step)
        }
        perform(action)
    }

    @usableFromInline
    override func deliver(_ event: Event, ticket: EffectTicket?) {
        guard let ticket else { return send(event) }
        guard ticket.isLive else { return }
        enqueue(.event(event, ticket, nil))
    }

    @usableFromInline
    override func weakened() -> EventSink<Event> { WeakEventSink(self) }

    @usableFromInline
    override var effectTracker: (any EffectTracking)? { tracker }

    /// Queues an entry; runs the queue on this thread when no other thread owns the engine. Returns false when
    /// the loop is stopped.
    @usableFromInline
    @discardableResult
    func enqueue(_ entry: Entry) -> Bool {
        let claimed = withCore { core, flags -> Bool? in
            if core.stopped { return nil }
            core.queue.append(entry)
            return EngineLock.claim(&flags)
        }
        guard let claimed else { return false }
        if claimed { runQueue() }
        return true
    }

    /// Runs `body` under the engine lock with the core and the engine flags (which it may change).
    @inlinable
    @inline(__always)
    func withCore<Result>(_ body: (inout Core, inout UInt32) -> Result) -> Result {
        var flags = engine.lock()
        defer { engine.unlock(flags) }
        return body(&core, &flags)
    }

    /// Attaches every feedback and folds their reactors into one closure that calls them in order: one small
    /// context per extra feedback. No array of closures: its elements would be reabstracted (thunks, allocations).
    @inlinable
    static func combine(_ feedbacks: [Feedback<State, Event>]) -> Reactor<Event> {
        var combined: Reactor<Event> = { _, _, _ in }
        for (index, feedback) in feedbacks.enumerated() {
            let next = feedback.attach()
            if index == 0 {
                combined = next
            } else {
                let previous = combined
                combined = { state, event, sink in
                    previous(state, event, sink)
                    next(state, event, sink)
                }
            }
        }
        return combined
    }

    /// Runs the queue: runs queued entries until it is empty, then gives the engine up; the caller owns the engine
    /// (`owned` is set). After `synchronousSteps` entries with more waiting, it hands the engine, still owned, to a
    /// task that runs the rest (``continueLater()``) and returns.
    @inlinable
    func runQueue() {
        // Declared once, outside the loop: the hot path assigns plain values and never builds an `Action`.
        var event: Event?
        var observers: [StepObserver<State, Event>] = []
        var revision: UInt64 = 0
        var completion: Completion?
        var rare = false
        var rareAction = Action.idle
        var budget = synchronousSteps
        var yielding = false
        while true {
            let state = withCore { core, flags -> State? in
                if core.stopped {
                    let observers = core.observers
                    core.observers = []
                    rare = true
                    rareAction = .shutDown(core.queue.removeAll(), observers, core.step)
                    return nil
                }
                if budget == 0 {
                    // Work is left after this call's share: it continues in a task, the engine still owned.
                    if !core.queue.isEmpty {
                        yielding = true
                        return nil
                    }
                } else {
                    budget &-= 1
                }
                while let entry = core.queue.popFirst() {
                    if core.queue.isEmpty { flags &= ~EngineLock.pending }
                    switch entry {
                    case .event(let next, let ticket, let done):
                        // An effect whose request changed or disappeared has a dead ticket.
                        if let ticket, !ticket.isLive { continue }
                        reduce(&core.state, next)
                        core.revision &+= 1
                        revision = core.revision
                        if !core.observers.isEmpty { observers = core.observers }
                        event = next
                        completion = done
                        return core.state
                    case .observe(let observer):
                        if observer.isCancelled { continue }
                        core.observers.append(observer)
                        rare = true
                        rareAction = .attach(observer, core.step)
                        return nil
                    }
                }
                flags = 0
                return nil
            }
            if let state, let event {
                notify(state, event, revision, observers, completion)
                if !observers.isEmpty { observers = [] }
                if completion != nil { completion = nil }
                continue
            }
            if yielding {
                continueLater()
                return
            }
            guard rare else { return }
            perform(rareAction)
            if case .shutDown = rareAction { return }
            rare = false
            rareAction = .idle
        }
    }

    /// Runs the rest of the queue in a task: the engine stays owned, so every sender meanwhile only enqueues and the
    /// order is the one the queue holds. The tracker counts the continuation as an effect until it ran, so a
    /// ``TestClock`` does not settle while work waits here. The task holds the loop, as any owner does.
    @usableFromInline
    func continueLater() {
        let tracker = self.tracker
        tracker?.effectStarted()
        Task { [self] in
            defer { tracker?.effectEnded() }
            runQueue()
        }
    }

    /// One step's notifications, in order: every feedback, then every observer, then the batch completion.
    @inlinable
    @inline(__always)
    func notify(
        _ state: State,
        _ event: Event,
        _ revision: UInt64,
        _ observers: [StepObserver<State, Event>],
        _ completion: Completion?
    ) {
        withUnsafePointer(to: state) { state in
            withUnsafePointer(to: event) { event in
                reactors(UnsafeRawPointer(state), UnsafeRawPointer(event), self)
            }
        }
        if !observers.isEmpty || completion != nil {
            let step = Step(event: event, state: state, revision: revision)
            for observer in observers where !observer.isCancelled { observer.body(step) }
            completion?(step)
        }
    }

    /// Performs an action outside the lock, on the engine owner's thread.
    @usableFromInline
    func perform(_ action: Action) {
        switch action {
        case .idle:
            return
        case .step(let state, let event, let revision, let observers, let completion):
            notify(state, event, revision, observers, completion)
        case .attach(let observer, let step):
            observer.body(step)
        case .shutDown(let dropped, let observers, let step):
            withUnsafePointer(to: step.state) { reactors(UnsafeRawPointer($0), nil, nil) }
            for observer in observers { observer.finish?() }
            for entry in dropped {
                switch entry {
                case .event(_, _, let completion): completion?(nil)
                case .observe(let observer):
                    observer.body(step)
                    observer.finish?()
                }
            }
        }
    }
}
