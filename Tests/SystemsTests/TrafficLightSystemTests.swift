import FeedbackLoop
import SystemKit
import Testing

@testable import Systems

@Suite(.timeLimit(.minutes(1)), .statesFitTheirSchemas)
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
        #expect(loop.state == .init(phase: .red, running: false, changes: 0, deadline: nil))
        loop.send(.start)
        await clock.waitForSleepers(count: 1)
        clock.advance(by: .seconds(4))
        await firstState(of: loop) { $0.phase == .green }
        loop.stop()
    }

    @Test func advanceWhileStoppedChangesNothing() {
        var state = TrafficLightSystem.State()
        TrafficLightSystem.reduceAndNote(&state, .advance(next: testOrigin))
        TrafficLightSystem.reduceAndNote(&state, .schedule(until: testOrigin))
        #expect(state == .init())
    }

    @Test func timerEventIsNotAClientEvent() throws {
        #expect(system.clientEventTypes == ["start", "stop"])
        #expect(try decode(TrafficLightSystem.Event.self, #"{"type":"advance"}"#) == .advance(next: nil))
        #expect(try encode(TrafficLightSystem.Event.start) == #"{"type":"start"}"#)
        #expect(
            try encode(TrafficLightSystem.Event.advance(next: testOrigin))
                == #"{"next":1767225600000,"type":"advance"}"#
        )
        #expect(
            try decode(TrafficLightSystem.Event.self, #"{"type":"schedule","until":1767225600000}"#)
                == .schedule(until: testOrigin)
        )
    }

    @Test func aRunningPhaseKeepsAnAbsoluteDeadlineAndTheNextOneFollowsItWithoutDrift() async {
        let clock = TestClock()
        let loop = system.makeLoop(from: system.initialState, environment: environment(clock))
        loop.send(.start)
        #expect(loop.state.deadline == testOrigin + .seconds(4))
        await clock.waitForSleepers(count: 1)
        clock.advance(by: .seconds(5))  // woken a second late: the green phase still ends 3 s after red's deadline
        let green = await firstState(of: loop) { $0.phase == .green }
        #expect(green?.deadline == testOrigin + .seconds(7))
        loop.stop()
    }

    /// A light restored after a restart (a new loop from the journaled state, the wall time moved on) keeps its
    /// phase's deadline instead of starting the phase again.
    @Test func aRestoredLightKeepsItsPhasesDeadline() async {
        let clock = TestClock()
        let restored = TrafficLightSystem.State(
            phase: .red,
            running: true,
            changes: 6,
            deadline: testOrigin + .seconds(1)
        )
        let loop = system.makeLoop(from: restored, revision: 20, environment: environment(clock))
        await clock.waitForSleepers(count: 1)
        clock.advance(by: .milliseconds(999))
        #expect(loop.state == restored)
        clock.advance(by: .milliseconds(1))
        let green = await firstState(of: loop) { $0.phase == .green }
        #expect(green == .init(phase: .green, running: true, changes: 7, deadline: testOrigin + .seconds(4)))
        loop.stop()
    }

    /// A deadline missed while the server was down fires once, at once; the next phase then runs from now
    /// (no burst of the phases that would have happened meanwhile).
    @Test func aDeadlineMissedWhileDownFiresOnceThenTheNextPhaseRunsFromNow() async {
        let clock = TestClock()
        let restored = TrafficLightSystem.State(
            phase: .red,
            running: true,
            changes: 0,
            deadline: testOrigin - .seconds(3600)
        )
        let loop = system.makeLoop(from: restored, environment: environment(clock))
        let green = await firstState(of: loop) { $0.phase == .green }
        #expect(green == .init(phase: .green, running: true, changes: 1, deadline: testOrigin + .seconds(3)))
        await clock.waitForSleepers(count: 1)
        #expect(loop.state.changes == 1)
        loop.stop()
    }

    /// A journal written before deadlines existed: a running light without one schedules its phase afresh.
    @Test func aRunningLightWithoutADeadlineSchedulesOne() throws {
        let state = try decode(TrafficLightSystem.State.self, #"{"phase":"yellow","running":true,"changes":2}"#)
        let loop = system.makeLoop(from: state, environment: environment(TestClock()))
        #expect(loop.state.deadline == testOrigin + .seconds(1))
        loop.stop()
    }
}
