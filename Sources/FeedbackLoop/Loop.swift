public import Synchronization

/// A running feedback system: a state, a pure reducer and feedbacks that watch the state and emit events.
///
/// Concurrency contract: one `Mutex` (`core`) owns the state, the revision, the event queue, the observer list
/// and two flags, `draining` and `stopped`. Whoever sets `draining` owns the engine: it reduces queued events
/// one at a time under the mutex and notifies feedbacks, observers and completions *outside* it, in order, on
/// its own thread. Every other sender only enqueues. So `send(_:)` from any thread is safe; a send from inside
/// a feedback, an observer or a completion is queued, never reduced reentrantly; reading `state` or sending from
/// there cannot deadlock. Feedback reactors are touched only by the engine's owner.
/// The reducer runs under the mutex: it must be pure and must not call back into the loop.
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
        @usableFromInline var draining = true
        @usableFromInline var stopped = false
        @usableFromInline var queue = EventQueue<Entry>()
        @usableFromInline var observers: [StepObserver<State, Event>] = []

        @usableFromInline
        init(state: State) { self.state = state }

        @inlinable
        var step: Step<State, Event> { Step(event: nil, state: state, revision: revision) }
    }

    @usableFromInline
    let core: Mutex<Core>
    @usableFromInline
    let reduce: @Sendable (inout State, Event) -> Void
    @usableFromInline
    let reactors: ContiguousArray<Reactor<State, Event>>

    /// Starts a loop: every feedback sees `initial` (in order) before this returns and before any event is
    /// reduced; events the feedbacks emit meanwhile are reduced next, on this thread.
    public init(
        initial: State,
        reduce: @escaping @Sendable (inout State, Event) -> Void,
        feedbacks: [Feedback<State, Event>] = []
    ) {
        core = Mutex(Core(state: initial))
        self.reduce = reduce
        var reactors = ContiguousArray<Reactor<State, Event>>()
        reactors.reserveCapacity(feedbacks.count)
        for feedback in feedbacks { reactors.append(feedback.attach()) }
        self.reactors = reactors
        super.init()
        for reactor in reactors { reactor.react(initial, nil, self) }
        drain()
    }

    /// Starts a loop with a composable ``Reducer``.
    public convenience init(initial: State, reducer: Reducer<State, Event>, feedbacks: [Feedback<State, Event>] = []) {
        self.init(initial: initial, reduce: reducer.reduce, feedbacks: feedbacks)
    }

    deinit {
        // Nobody drains now: a drainer holds a strong reference.
        let action = core.withLock { core -> Action in
            if core.stopped { return .idle }
            core.stopped = true
            return .shutDown(core.queue.removeAll(), core.observers, core.step)
        }
        perform(action)
    }

    /// The current state.
    public var state: State { core.withLock { $0.state } }

    /// The number of events reduced so far.
    public var revision: UInt64 { core.withLock { $0.revision } }

    /// The current state with its revision (the step's event is nil).
    @inlinable
    public var currentStep: Step<State, Event> { core.withLock { $0.step } }

    /// True once `stop()` was called.
    @inlinable
    public var isStopped: Bool { core.withLock { $0.stopped } }

    /// Sends an external event; external events are never dropped while the loop runs.
    ///
    /// When no other thread is draining, the event is reduced and every feedback and observer is notified on
    /// the calling thread before this returns; otherwise it is queued behind the events already waiting.
    @inlinable
    public override func send(_ event: Event) {
        // Hot path: plain locals instead of an `Action`, so that nothing is copied through value witnesses.
        var observers: [StepObserver<State, Event>] = []
        var revision: UInt64 = 0
        let state = core.withLock { core -> State? in
            if core.stopped { return nil }
            if core.draining {
                core.queue.append(.event(event, nil, nil))
                return nil
            }
            core.draining = true
            reduce(&core.state, event)
            core.revision &+= 1
            revision = core.revision
            if !core.observers.isEmpty { observers = core.observers }
            return core.state
        }
        guard let state else { return }
        notify(state, event, revision, observers, nil)
        drain()
    }

    /// Stops the loop: every running effect is cancelled, state streams finish, later sends are ignored and
    /// queued events are dropped (their completions get nil). Called from inside a step (a feedback or an
    /// observer), or while another thread drains, the shutdown happens as soon as the current step ends.
    public func stop() {
        let action = core.withLock { core -> Action in
            if core.stopped { return .idle }
            core.stopped = true
            if core.draining { return .idle }
            core.draining = true
            return .shutDown(core.queue.removeAll(), core.observers, core.step)
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

    /// Queues an entry; drains on this thread when nobody else does. Returns false when the loop is stopped.
    @usableFromInline
    @discardableResult
    func enqueue(_ entry: Entry) -> Bool {
        let claimed = core.withLock { core -> Bool? in
            if core.stopped { return nil }
            core.queue.append(entry)
            if core.draining { return false }
            core.draining = true
            return true
        }
        guard let claimed else { return false }
        if claimed { drain() }
        return true
    }

    /// Runs queued entries until the queue is empty; the caller owns the engine (`draining` is set).
    @inlinable
    func drain() {
        while true {
            var event: Event?
            var observers: [StepObserver<State, Event>] = []
            var revision: UInt64 = 0
            var completion: Completion?
            var rare: Action?
            let state = core.withLock { core -> State? in
                if core.stopped {
                    let observers = core.observers
                    core.observers = []
                    rare = .shutDown(core.queue.removeAll(), observers, core.step)
                    return nil
                }
                while let entry = core.queue.popFirst() {
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
                        rare = .attach(observer, core.step)
                        return nil
                    }
                }
                core.draining = false
                return nil
            }
            if let state, let event {
                notify(state, event, revision, observers, completion)
                continue
            }
            guard let rare else { return }
            perform(rare)
            if case .shutDown = rare { return }
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
        reactors.withUnsafeBufferPointer { reactors in
            for index in reactors.indices { reactors[index].react(state, event, self) }
        }
        if !observers.isEmpty || completion != nil {
            let step = Step(event: event, state: state, revision: revision)
            for observer in observers where !observer.isCancelled { observer.body(step) }
            completion?(step)
        }
    }

    /// Performs an action outside the mutex, on the engine owner's thread.
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
            for reactor in reactors { reactor.stop() }
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
