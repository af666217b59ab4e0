import FeedbackLoop
import SystemKit
import Testing

@testable import Systems

@Suite(.timeLimit(.minutes(1)))
struct TrafficLightSystemTests {
    private let system = TrafficLightSystem(red: .seconds(4), green: .seconds(3), yellow: .seconds(1))

    @Test func cyclesThroughThePhasesOnItsTimers() async {
        let clock = TestClock()
        let loop = system.makeLoop(from: system.initialState, environment: environment(clock))
        loop.send(.start)
        for (duration, expected) in [(4, TrafficLightSystem.State.Phase.green), (3, .yellow), (1, .red), (4, .green)] {
            await clock.waitForSleepers(count: 1)
            clock.advance(by: .seconds(duration) - .milliseconds(1))
            #expect(loop.state.phase != expected)
            clock.advance(by: .milliseconds(1))
            await firstState(of: loop) { $0.phase == expected }
        }
        #expect(loop.state.changes == 4)
        loop.stop()
    }

    @Test func stopHaltsTheCycleAndStartResumesIt() async {
        let clock = TestClock()
        let loop = system.makeLoop(from: system.initialState, environment: environment(clock))
        loop.send(.start)
        await clock.waitForSleepers(count: 1)
        loop.send(.stop)
        clock.advance(by: .seconds(60))
        #expect(loop.state == .init(phase: .red, running: false, changes: 0))
        loop.send(.start)
        await clock.waitForSleepers(count: 1)
        clock.advance(by: .seconds(4))
        await firstState(of: loop) { $0.phase == .green }
        loop.stop()
    }

    @Test func advanceWhileStoppedChangesNothing() {
        var state = TrafficLightSystem.State()
        TrafficLightSystem.reduce(&state, .advance)
        #expect(state == .init())
    }

    @Test func timerEventIsNotAClientEvent() throws {
        #expect(system.clientEventTypes == ["start", "stop"])
        #expect(try decode(TrafficLightSystem.Event.self, #"{"type":"advance"}"#) == .advance)
        #expect(try encode(TrafficLightSystem.Event.start) == #"{"type":"start"}"#)
    }
}
