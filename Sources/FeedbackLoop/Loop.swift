public import Synchronization

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
        /// A client's event (a send or a batch), or an effect's through the loop as a plain sink.
        case event(Event, EffectTicket?, Completion?)
        /// An event of the feedback at this index (or of one of its effects): counted against the budget.
        case feedback(Event, EffectTicket?, Int)
        /// A client's event already reduced by its sender, on the state it is queued right behind (a conditional
        /// send): the loop installs the state instead of reducing again. The state waits in `Core.appliedStates`, in
        /// the same order: a `State` inline would make every entry of the queue as large as a state (a batch of 64
        /// plain sends cost 46 ns an event instead of 30), and one boxed cost an allocation an event.
        case applied(Event, Completion?)
        case observe(StepObserver<State, Event>)
        /// Start the stopped feedbacks again.
        case resume
    }

    @usableFromInline
    enum Action: Sendable {
        case idle
        case attach(StepObserver<State, Event>, Step<State, Event>)
        /// Dropped entries, observers to finish, the last step, and whether the feedbacks still run.
        case shutDown([Entry], [StepObserver<State, Event>], Step<State, Event>, Bool)
        /// The feedbacks went over budget for too long: stop them; the index of the loudest.
        case stopFeedbacks(State, Int)
        /// Attach the feedbacks anew and show them the state.
        case restartFeedbacks(State)
    }

    @usableFromInline
    struct Core: Sendable {
        @usableFromInline var state: State
        @usableFromInline var revision: UInt64 = 0
        @usableFromInline var stopped = false {
            didSet { unusual = offloaded || feedbacksStopped || marked || stopped }
        }
        @usableFromInline var queue = EventQueue<Entry>()
        /// The states of the `.applied` entries of `queue`, in their order: each is taken when its entry runs. An
        /// array, not a second `EventQueue`: one word in every loop instead of three, and a batch is a few states.
        @usableFromInline var appliedStates: [State] = []
        @usableFromInline var observers: [StepObserver<State, Event>] = []
        /// Set when the feedbacks ran away: steps reach observers only, feedback events are dropped.
        @usableFromInline var feedbacksStopped = false {
            didSet { unusual = offloaded || feedbacksStopped || marked || stopped }
        }
        /// Set by `offload(to:)`: no caller's thread runs a step, and reduces run outside the lock.
        @usableFromInline var offloaded = false {
            didSet { unusual = offloaded || feedbacksStopped || marked || stopped }
        }
        /// The loop has a `marker` (set once, at init): its steps are marked, so they run in the queue's run.
        @usableFromInline var marked = false {
            didSet { unusual = offloaded || feedbacksStopped || marked || stopped }
        }
        /// `offloaded || feedbacksStopped || marked || stopped`: the one flag the send path reads before the common
        /// case (a check of the marker itself there cost about 2 ns a send, a separate one of `stopped` about 1).
        @usableFromInline var unusual = false
        /// An offloaded loop's reduce is running outside the lock: the revision is about to move.
        @usableFromInline var reducing = false
        /// Where an offloaded loop's steps run; nil for the global concurrent executor. Boxed: a loop that is never
        /// offloaded pays one word for it.
        @usableFromInline var executor: ExecutorBox?

        @usableFromInline
        init(state: State, revision: UInt64) {
            self.state = state
            self.revision = revision
        }

        @inlinable
        var step: Step<State, Event> { Step(event: nil, state: state, revision: revision) }

        /// Takes every queued entry, oldest first, and drops the states of the applied ones: what a stopping loop
        /// completes with nil.
        @inlinable
        mutating func takeQueue() -> [Entry] {
            appliedStates.removeAll()
            return queue.removeAll()
        }
    }

    @usableFromInline
    let engine = EngineLock()
    // Guarded by `engine`; accessed only through `withCore`.
    @usableFromInline
    @exclusivity(unchecked)
    var core: Core
    @usableFromInline
    let reduce: @Sendable (inout State, Event) -> Void
    /// Every feedback's reactor, combined into one closure at init (a step costs one call, no array). A `let`: a
    /// closure read from a `var` would be retained and released at every step.
    @usableFromInline
    let reactors: Reactor<Event>
    /// The feedbacks' budget, their tagging sinks and supervisor; nil without a budget, so that a plain loop pays
    /// one word for all of it.
    @usableFromInline
    let governance: LoopGovernance<State, Event>?
    /// Told where each step's system code starts and ends; nil for nobody.
    @usableFromInline
    let marker: (any StepMarking)?
    /// `core.offloaded`, readable without the lock by whoever just claimed the engine.
    @usableFromInline
    let offloaded = Atomic<Bool>(false)
    /// Told when each effect starts and ends (a ``TestClock``); nil for nobody. A continuation of the queue counts
    /// as an effect too: work is under way until it ran.
    @usableFromInline
    let tracker: (any EffectTracking)?
    /// Where the feedbacks' effects run after their first suspension; nil for the global concurrent executor.
    @usableFromInline
    let executorOfEffects: (any TaskExecutor)?
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
    /// of the queue continues in a task, in order (at least 1). `budget` limits the events the feedbacks send
    /// (``EffectBudget``; nil for no limit) and `supervisor` is told when they go over it. `marker` is told where
    /// each step's system code starts and ends (``StepMarking``). The feedbacks' effects run on `effectExecutor`
    /// after their first suspension (a host's executor that marks whose code runs there; nil for the global
    /// concurrent executor). With `feedbacksStopped` the feedbacks start stopped, as a runaway's are: they see
    /// nothing until ``resumeFeedbacks()`` (a host's fork, whose effects wait for a client).
    @inlinable
    public init(
        initial: State,
        revision: UInt64 = 0,
        reduce: @escaping @Sendable (inout State, Event) -> Void,
        feedbacks: [Feedback<State, Event>] = [],
        effectTracker: (any EffectTracking)? = nil,
        synchronousSteps: Int = Loop.defaultSynchronousSteps,
        budget: EffectBudget? = nil,
        supervisor: (any LoopSupervising)? = nil,
        marker: (any StepMarking)? = nil,
        effectExecutor: (any TaskExecutor)? = nil,
        feedbacksStopped: Bool = false
    ) {
        core = Core(state: initial, revision: revision)
        core.marked = marker != nil
        core.feedbacksStopped = feedbacksStopped
        engine.unlock(EngineLock.owned)  // init owns the engine until its first run of the queue ends
        self.reduce = reduce
        tracker = effectTracker
        executorOfEffects = effectExecutor
        self.synchronousSteps = max(synchronousSteps, 1)
        self.marker = marker
        // Only a budget needs to know whose events are whose: without one, feedbacks send through the loop itself
        // and a loop costs no sink objects.
        let governance = budget.map { LoopGovernance(budget: $0, feedbacks: feedbacks, supervisor: supervisor) }
        self.governance = governance
        reactors = Self.combine(feedbacks, sinks: governance?.sinks ?? [])
        super.init()
        for sink in governance?.sinks ?? [] { sink.loop = self }
        if !feedbacksStopped { withUnsafePointer(to: initial) { reactors(UnsafeRawPointer($0), nil, self) } }
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
            return .shutDown(core.takeQueue(), core.observers, core.step, !core.feedbacksStopped)
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

    /// True while the feedbacks are stopped for going over their ``EffectBudget``: clients' events are still
    /// reduced and observed; ``resumeFeedbacks()`` starts them again.
    public var feedbacksAreStopped: Bool { withCore { core, _ in core.feedbacksStopped } }

    /// The name of the feedback at `index` in the order given: its ``Feedback/named(_:)`` name, else
    /// "feedback N" (counting from 1).
    public func feedbackName(at index: Int) -> String {
        guard let feedbacks = governance?.feedbacks, feedbacks.indices.contains(index) else {
            return "feedback \(index + 1)"
        }
        return feedbacks[index].name ?? "feedback \(index + 1)"
    }

    /// Moves the loop's work off its callers' threads for good, for a system whose reduces are too slow to run on
    /// a server thread: from now on every step runs in a task on `executor` (nil: the global concurrent executor),
    /// and each reduce runs outside the loop's lock on a copy of the state, so a sender only queues and a reader
    /// gets the last state at once, however long a reduce takes. Order and every other promise stay as they are.
    public func offload(to executor: (any TaskExecutor)?) {
        withCore { core, _ in
            core.offloaded = true
            core.executor = executor.map(ExecutorBox.init)
        }
        offloaded.store(true, ordering: .releasing)
    }

    /// True once ``offload(to:)`` was called.
    public var isOffloaded: Bool { offloaded.load(ordering: .acquiring) }

    /// Starts the feedbacks that went over their budget again, in order behind the events already queued: each is
    /// attached anew and sees the state of that moment as its first, and the budget starts full. Nothing happens
    /// when they run.
    public func resumeFeedbacks() {
        enqueue(.resume)
    }

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
        var queued = false
        let state = withCore { core, flags -> State? in
            // A stopped loop, a marked one, an offloaded one, or one whose feedbacks are stopped: one flag, and the
            // queue's run knows each case, so that this path stays the plain loop's.
            if core.unusual {
                if core.stopped { return nil }
                core.queue.append(.event(event, nil, nil))
                queued = EngineLock.claim(&flags)
                return nil
            }
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
        guard let state else {
            if queued { runClaimed() }
            return
        }
        notify(state, event, revision, observers, nil, reacting: true, marked: false)
        // Usually nothing was queued meanwhile: release the engine without taking the lock.
        if !engine.releaseIfIdle() { runClaimed() }
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
            return .shutDown(core.takeQueue(), observers, core.step, !core.feedbacksStopped)
        }
        perform(action)
    }

    @usableFromInline
    override func deliver(_ event: Event, ticket: EffectTicket?) {
        guard let ticket else { return send(event) }
        guard ticket.isLive else { return }
        enqueue(.event(event, ticket, nil))
    }

    /// An event of the feedback at index `origin`, or of one of its effects (`ticket`): queued behind the rest.
    @usableFromInline
    ///
    /// With a budget, at most a burst of them wait at once: past that a storm's events are dropped as they come
    /// (counted in `droppedFeedbackEvents`), so a flood that outruns its throttle cannot grow the queue without bound.
    func accept(_ event: Event, ticket: EffectTicket?, origin: Int) {
        if let ticket, !ticket.isLive { return }
        let claimed = withCore { core, flags -> Bool? in
            if core.stopped || core.feedbacksStopped { return nil }
            if let governance {
                guard governance.waiting < governance.bucket.budget.burst else {
                    governance.dropped &+= 1
                    return nil
                }
                governance.waiting &+= 1
            }
            core.queue.append(.feedback(event, ticket, origin))
            return EngineLock.claim(&flags)
        }
        if claimed == true { runClaimed() }
    }

    /// Feedback events dropped because a burst of them was already waiting for the budget.
    public var droppedFeedbackEvents: Int { withCore { _, _ in governance?.dropped ?? 0 } }

    @usableFromInline
    override func weakened() -> EventSink<Event> { WeakEventSink(self) }

    @usableFromInline
    override var effectTracker: (any EffectTracking)? { tracker }

    @usableFromInline
    override var effectExecutor: (any TaskExecutor)? { executorOfEffects }

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
        if claimed { runClaimed() }
        return true
    }

    /// Runs the queue of an engine just claimed: on this thread, or in a task when the loop is offloaded.
    @inlinable
    func runClaimed() {
        if offloaded.load(ordering: .acquiring) { continueLater() } else { runQueue() }
    }

    /// Runs `body` under the engine lock with the core and the engine flags (which it may change).
    @inlinable
    @inline(__always)
    func withCore<Result>(_ body: (inout Core, inout UInt32) -> Result) -> Result {
        var flags = engine.lock()
        defer { engine.unlock(flags) }
        return body(&core, &flags)
    }

    /// Attaches every feedback and folds their reactors into one closure that calls them in order, each with its
    /// own sink (nil still means "stop"): one small context per feedback. No array of closures: its elements would
    /// be reabstracted (thunks, allocations).
    @inlinable
    static func combine(
        _ feedbacks: [Feedback<State, Event>],
        sinks: [FeedbackSink<State, Event>]
    ) -> Reactor<Event> {
        var combined: Reactor<Event> = { _, _, _ in }
        for (index, feedback) in feedbacks.enumerated() {
            var next = feedback.attach()
            if sinks.indices.contains(index) {
                // Tagged: the feedback's reactor lives in its sink, which a resume attaches anew.
                let own = sinks[index]
                own.reactor = next
                next = { state, event, sink in own.reactor?(state, event, sink == nil ? nil : own) }
            }
            if index == 0 {
                combined = next
            } else {
                let previous = combined
                let current = next
                combined = { state, event, sink in
                    previous(state, event, sink)
                    current(state, event, sink)
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
        // The feedback whose event the step reduces (-1: none known), for the step's observers.
        var feedback = -1
        var rare = false
        var rareAction = Action.idle
        var budget = synchronousSteps
        var yielding = false
        var reacting = true
        var throttle: Duration?
        var throttledBy: Int?
        // An offloaded loop's reduce, taken out of the lock: the state to reduce from and the event.
        var outside: State?
        let marked = marker != nil
        while true {
            var state = withCore { core, flags -> State? in
                if core.stopped {
                    let observers = core.observers
                    core.observers = []
                    rare = true
                    rareAction = .shutDown(core.takeQueue(), observers, core.step, !core.feedbacksStopped)
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
                    // The step's event, the state its sender already reduced (an applied entry), its completion,
                    // and whether the feedbacks see it.
                    let next: Event
                    var applied: State? = nil
                    var done: Completion? = nil
                    feedback = -1
                    switch consume entry {
                    case .event(let event, let ticket, let completion):
                        // An effect whose request changed or disappeared has a dead ticket.
                        if let ticket, !ticket.isLive { continue }
                        next = event
                        done = completion
                    case .applied(let event, let completion):
                        // Reduced by the sender on the state right before this one: the reducer is pure, so the
                        // step is the same; its feedbacks still run here, marked.
                        next = event
                        applied = core.appliedStates.removeFirst()  // queued with the entry, in its order
                        done = completion
                    case .feedback(let event, let ticket, let origin):
                        if let governance { governance.waiting &-= 1 }
                        if let ticket, !ticket.isLive { continue }
                        if core.feedbacksStopped { continue }
                        if let governance {
                            switch governance.bucket.take(origin: origin) {
                            case .take:
                                break
                            case .wait(let delay, let first):
                                // Over the rate: this event and everything behind it wait for the bucket.
                                core.queue.pushFront(.feedback(event, ticket, origin))
                                governance.waiting &+= 1
                                throttle = delay
                                if first { throttledBy = governance.bucket.loudest }
                                return nil
                            case .runaway:
                                core.feedbacksStopped = true
                                core.queue.removeAll { $0.isFeedback }
                                governance.waiting = 0
                                rare = true
                                rareAction = .stopFeedbacks(core.state, governance.bucket.loudest)
                                return nil
                            }
                        }
                        next = event
                        feedback = origin
                    case .observe(let observer):
                        if observer.isCancelled { continue }
                        core.observers.append(observer)
                        rare = true
                        rareAction = .attach(observer, core.step)
                        return nil
                    case .resume:
                        guard core.feedbacksStopped else { continue }
                        core.feedbacksStopped = false
                        governance?.bucket.reset()
                        rare = true
                        rareAction = .restartFeedbacks(core.state)
                        return nil
                    }
                    marker?.stepStarted(revision: core.revision &+ 1)
                    reacting = !core.feedbacksStopped
                    event = next
                    completion = done
                    if let applied {
                        core.state = applied
                    } else if core.offloaded {
                        core.reducing = true
                        outside = core.state
                        return nil
                    } else {
                        reduce(&core.state, next)
                    }
                    core.revision &+= 1
                    revision = core.revision
                    if !core.observers.isEmpty { observers = core.observers }
                    return core.state
                }
                flags = 0
                return nil
            }
            if state == nil, var offloaded = outside, let event {
                outside = nil
                reduceOutside(&offloaded, event, &revision, &observers)
                state = offloaded
            }
            if let state, let event {
                notify(
                    state,
                    event,
                    revision,
                    observers,
                    completion,
                    reacting: reacting,
                    marked: marked,
                    feedback: feedback
                )
                if !observers.isEmpty { observers = [] }
                if completion != nil { completion = nil }
                continue
            }
            if yielding {
                continueLater()
                return
            }
            if let delay = throttle {
                if let throttledBy { governance?.supervisor?.feedbacksThrottled(feedback: throttledBy) }
                continueLater(after: delay)
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
    /// An offloaded loop's reduce: `state` (a copy of the core's) is reduced with the lock free, so that senders
    /// and readers never wait for it, then stored back. Only the engine owner changes the state, so nothing is lost;
    /// `reducing` keeps a conditional send from matching the revision that is about to move.
    @usableFromInline
    func reduceOutside(
        _ state: inout State,
        _ event: Event,
        _ revision: inout UInt64,
        _ observers: inout [StepObserver<State, Event>]
    ) {
        reduce(&state, event)
        let next = state
        withCore { core, _ in
            core.state = next
            core.revision &+= 1
            core.reducing = false
            revision = core.revision
            if !core.observers.isEmpty { observers = core.observers }
        }
    }

    /// `delay`, when given, is a throttled loop's wait for its budget.
    @usableFromInline
    func continueLater(after delay: Duration? = nil) {
        let tracker = self.tracker
        tracker?.effectStarted()
        let executor = offloaded.load(ordering: .acquiring) ? withCore { core, _ in core.executor?.executor } : nil
        Task(executorPreference: executor) { [self] in
            defer { tracker?.effectEnded() }
            if let delay { try? await Task.sleep(for: delay) }
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
        _ completion: Completion?,
        reacting: Bool,
        marked: Bool,
        feedback: Int = -1
    ) {
        if reacting {
            withUnsafePointer(to: state) { state in
                withUnsafePointer(to: event) { event in
                    reactors(UnsafeRawPointer(state), UnsafeRawPointer(event), self)
                }
            }
        }
        // The system's code of this step (its reduce, its feedbacks' synchronous reactions) is done.
        if marked { marker?.stepEnded() }
        if !observers.isEmpty || completion != nil {
            let step = Step(event: event, state: state, revision: revision, feedback: feedback < 0 ? nil : feedback)
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
        case .attach(let observer, let step):
            observer.body(step)
        case .shutDown(let dropped, let observers, let step, let reacting):
            if reacting { withUnsafePointer(to: step.state) { reactors(UnsafeRawPointer($0), nil, nil) } }
            for observer in observers { observer.finish?() }
            for entry in dropped {
                switch entry {
                case .event(_, _, let completion), .applied(_, let completion): completion?(nil)
                case .feedback, .resume: break
                case .observe(let observer):
                    observer.body(step)
                    observer.finish?()
                }
            }
        case .stopFeedbacks(let state, let loudest):
            withUnsafePointer(to: state) { reactors(UnsafeRawPointer($0), nil, nil) }
            governance?.supervisor?.feedbacksStopped(feedback: loudest)
        case .restartFeedbacks(let state):
            governance?.reattach()
            withUnsafePointer(to: state) { reactors(UnsafeRawPointer($0), nil, self) }
        }
    }
}
