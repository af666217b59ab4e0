import FeedbackLoop
import SystemKit
import Testing

@testable import Systems

@Suite(.timeLimit(.minutes(1)), .statesFitTheirSchemas)
struct CatchSystemTests {
    @Test func machineThrowsBackAfterTheConfiguredDelay() async {
        let clock = TestClock()
        let system = CatchSystem(throwBackDelay: .milliseconds(300))
        let loop = system.makeLoop(from: system.initialState, environment: environment(clock))
        loop.send(.throwToMachine)
        #expect(loop.state == .init(holder: .machine, throwCount: 1, throwBackAt: testOrigin + .milliseconds(300)))
        await clock.waitForSleepers(count: 1)
        clock.advance(by: .milliseconds(299))
        #expect(loop.state.holder == .machine)
        clock.advance(by: .milliseconds(1))
        let state = await firstState(of: loop) { $0.holder == .human }
        #expect(state == .init(holder: .human, throwCount: 2))
        loop.stop()
    }

    /// The throw-back's deadline is in the state: a session restored while the machine holds the ball (a new loop
    /// from the journaled state, the wall time moved on) throws it back at that deadline, not a full delay later.
    @Test func aRestoredMachineThrowsBackAtTheJournaledDeadline() async {
        let clock = TestClock()
        let system = CatchSystem(throwBackDelay: .seconds(60))
        let restored = CatchSystem.State(holder: .machine, throwCount: 5, throwBackAt: testOrigin + .milliseconds(200))
        let loop = system.makeLoop(from: restored, revision: 9, environment: environment(clock))
        await clock.waitForSleepers(count: 1)
        clock.advance(by: .milliseconds(199))
        #expect(loop.state == restored)
        clock.advance(by: .milliseconds(1))
        let state = await firstState(of: loop) { $0.holder == .human }
        #expect(state == .init(holder: .human, throwCount: 6))
        loop.stop()
    }

    @Test func aDeadlineOnlyCountsWhileTheMachineHoldsTheBall() {
        var state = CatchSystem.State()
        CatchSystem.reduceAndNote(&state, .schedule(until: testOrigin))
        #expect(state == .init())
        CatchSystem.reduceAndNote(&state, .throwToMachine)
        CatchSystem.reduceAndNote(&state, .schedule(until: testOrigin))
        CatchSystem.reduceAndNote(&state, .schedule(until: testOrigin + .seconds(9)))
        #expect(state == .init(holder: .machine, throwCount: 1, throwBackAt: testOrigin))
    }

    @Test func throwFromTheSideWithoutTheBallIsIgnored() {
        var state = CatchSystem.State()
        CatchSystem.reduceAndNote(&state, .throwToHuman)
        #expect(state == .init(holder: .human, throwCount: 0))
        CatchSystem.reduceAndNote(&state, .throwToMachine)
        CatchSystem.reduceAndNote(&state, .throwToMachine)
        #expect(state == .init(holder: .machine, throwCount: 1, throwBackAt: nil))
    }

    @Test func onlyTheHumansThrowIsAClientEvent() throws {
        let system = CatchSystem()
        #expect(system.clientEventTypes == ["throwToMachine"])
        #expect(try decode(CatchSystem.Event.self, #"{"type":"throwToHuman"}"#) == .throwToHuman)
        #expect(try encode(CatchSystem.State()) == #"{"holder":"human","throwCount":0}"#)
    }

    @Test func stoppingTheLoopCancelsTheMachinesTimer() async {
        let clock = TestClock()
        let system = CatchSystem()
        let loop = system.makeLoop(from: system.initialState, environment: environment(clock))
        loop.send(.throwToMachine)
        await clock.waitForSleepers(count: 1)
        loop.stop()
        clock.advance(by: .seconds(5))
        #expect(loop.state.holder == .machine)
    }
}
