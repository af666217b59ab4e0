import FeedbackHostClient
import FeedbackHostTesting
import Systems
import Testing

/// The README's integration-test example ("Integration tests that do not wait"), as it is printed there.
@Suite(.serialized, .timeLimit(.minutes(1)))
@MainActor
struct ReadmeExampleTests {
    @Test func trafficLightRunsItsWholeCycle() async throws {
        let instance = try await LocalInstance.start()
        defer { instance.stop() }
        let light = try await instance.host.createStore(TrafficLightSystem())
        defer { light.close() }
        light.send(.start)
        try await instance.advance(by: .zero)  // the first phase's deadline is in the state once this answers
        let cycle: [(TrafficLightSystem.State.Phase, Int, TrafficLightSystem.State.Phase)] = [
            (.red, 4000, .green), (.green, 3000, .yellow), (.yellow, 1000, .red),
        ]
        for (phase, duration, following) in cycle {
            try await instance.advance(by: .milliseconds(duration - 1))
            try await light.settle(atLeast: try await instance.revision(of: light.session))
            #expect(light.state.phase == phase)
            try await instance.advance(by: .milliseconds(1))
            try await light.settle(atLeast: try await instance.revision(of: light.session))
            #expect(light.state.phase == following)
        }
    }
}
