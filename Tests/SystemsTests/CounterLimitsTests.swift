import FeedbackJSON
import SystemKit
import Testing

@testable import Systems

/// A client may start a session from any state, counters at the integer limits included: every reducer stays total
/// (a trap there would take the whole server down with it).
@Suite(.statesFitTheirSchemas)
struct CounterLimitsTests {
    @Test func catchCountsSaturate() {
        var state = CatchSystem.State(holder: .human, throwCount: .max)
        CatchSystem.reduceAndNote(&state, .throwToMachine)
        #expect(state.throwCount == .max)
        CatchSystem.reduceAndNote(&state, .throwToHuman)
        #expect(state.throwCount == .max)
    }

    @Test func trafficLightChangesSaturate() {
        var state = TrafficLightSystem.State(phase: .yellow, running: true, changes: .max)
        TrafficLightSystem.reduceAndNote(&state, .advance(next: nil))
        #expect(state.changes == .max)
    }

    @Test func pagingCountersNeitherTrapNorRepeatAGeneration() {
        var state = PagingSystem.State(query: "q", status: .loading, pagesLoaded: .max, generation: .max)
        #expect(PageRequest(state)?.number == .max)
        PagingSystem.reduceAndNote(&state, .pageLoaded(PagingSystem.Page(url: "http://127.0.0.1/1", items: [.int(1)])))
        #expect(state.pagesLoaded == .max)
        PagingSystem.reduceAndNote(&state, .clear)
        #expect(state.generation == .min)
    }

    @Test func saturatingAddingHoldsAtBothLimits() {
        #expect(Int.max.saturatingAdding(1) == .max)
        #expect(Int.min.saturatingAdding(-1) == .min)
        #expect(Int.max.saturatingAdding(Int.min) == -1)
        #expect(40.saturatingAdding(2) == 42)
    }
}
