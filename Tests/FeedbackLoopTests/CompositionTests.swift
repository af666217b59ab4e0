import FeedbackLoop
import Testing

/// A parent system made of a counter child and a text child.
struct AppState: Sendable, Equatable {
    var counter = 0
    var text = ""
}

enum AppEvent: Sendable, Equatable {
    case counter(Int)
    case text(String)

    var counter: Int? {
        if case .counter(let value) = self { return value }
        return nil
    }

    var text: String? {
        if case .text(let value) = self { return value }
        return nil
    }
}

@Suite(.timeLimit(.minutes(1)))
struct CompositionTests {
    let counterReducer = Reducer<Int, Int> { $0 += $1 }
    let textReducer = Reducer<String, String> { $0 += $1 }

    var appReducer: Reducer<AppState, AppEvent> {
        .combine(
            counterReducer.pullback(state: \AppState.counter, event: \AppEvent.counter),
            textReducer.pullback(state: \AppState.text, event: \AppEvent.text)
        )
    }

    @Test func pulledBackReducersEachReduceTheirOwnPartOfTheParent() {
        let loop = Loop(initial: AppState(), reducer: appReducer)
        loop.send(.counter(2))
        loop.send(.text("ab"))
        loop.send(.counter(3))
        #expect(loop.state == AppState(counter: 5, text: "ab"))
    }

    @Test func pulledBackFeedbackSeesTheChildStateAndItsEventsReachTheParent() async {
        // Child feedback: when the counter is exactly 3, add 300. Only at 3: a request that stayed non-nil after the
        // effect's event (`>= 3`) fed itself again and again (303, 30603, ...) until the Int overflowed, and the
        // state the test read depended on how far that loop had run.
        let child = Feedback<Int, Int>.react(request: { $0 == 3 ? $0 : nil }, effect: { value in value * 100 })
        let seenChildEvents = Recorder<Int>()
        let watcher = Feedback<Int, Int>.middleware { _, event, _ in seenChildEvents.append(event) }
        let lifted = child.pullback(
            state: { (app: AppState) in app.counter },
            event: \.counter,
            embed: AppEvent.counter
        )
        let liftedWatcher = watcher.pullback(
            state: { (app: AppState) in app.counter },
            event: \.counter,
            embed: AppEvent.counter
        )
        let loop = Loop(initial: AppState(), reducer: appReducer, feedbacks: [lifted, liftedWatcher])
        loop.send(.text("x"))
        loop.send(.counter(3))
        let state = await firstState(of: loop) { $0.counter > 3 }
        #expect(state?.counter == 303)
        #expect(seenChildEvents.all.prefix(2) == [3, 300])
    }

    @Test func scopedLoopReadsSendsAndObservesItsSubState() async {
        let loop = Loop(initial: AppState(), reducer: appReducer)
        let counter = loop.scoped(to: { $0.counter }, event: AppEvent.counter)
        let seen = Recorder<Int>()
        counter.observe { seen.append($0) }
        counter.send(4)
        loop.send(.text("t"))
        #expect(counter.state == 4)
        #expect(loop.state.counter == 4)
        #expect(seen.all == [0, 4, 4])
    }

    @Test func scopeOfAScopeNarrowsFurther() async {
        struct Outer: Sendable { var app = AppState() }
        let loop = Loop<Outer, AppEvent>(initial: Outer()) { outer, event in
            if case .counter(let value) = event { outer.app.counter += value }
        }
        let app = loop.scoped(to: { $0.app }, event: { (event: AppEvent) in event })
        let counter = app.scoped(to: { $0.counter }, event: AppEvent.counter)
        counter.send(7)
        var iterator = counter.states.makeAsyncIterator()
        let first = await iterator.next()
        #expect(first == 7)
    }
}
