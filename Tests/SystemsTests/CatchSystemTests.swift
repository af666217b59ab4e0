import FeedbackLoop
import SystemKit
import Testing

@testable import Systems

@Suite(.timeLimit(.minutes(1)))
struct CatchSystemTests {
    @Test func machineThrowsBackAfterTheConfiguredDelay() async {
        let clock = TestClock()
        let system = CatchSystem(throwBackDelay: .milliseconds(300))
        let loop = system.makeLoop(from: system.initialState, environment: environment(clock))
        loop.send(.throwToMachine)
        #expect(loop.state == .init(holder: .machine, throwCount: 1))
        await clock.waitForSleepers(count: 1)
        clock.advance(by: .milliseconds(299))
        #expect(loop.state.holder == .machine)
        clock.advance(by: .milliseconds(1))
        let state = await firstState(of: loop) { $0.holder == .human }
        #expect(state == .init(holder: .human, throwCount: 2))
        loop.stop()
    }

    @Test func throwFromTheSideWithoutTheBallIsIgnored() {
        var state = CatchSystem.State()
        CatchSystem.reduce(&state, .throwToHuman)
        #expect(state == .init(holder: .human, throwCount: 0))
        CatchSystem.reduce(&state, .throwToMachine)
        CatchSystem.reduce(&state, .throwToMachine)
        #expect(state == .init(holder: .machine, throwCount: 1))
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
