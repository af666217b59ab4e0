import FeedbackHostClient
import FeedbackHostTesting
import Foundation
import Systems
import Testing

typealias Phase = TrafficLightSystem.State.Phase

/// The README's integration-test example ("Integration tests that do not wait"), as it is printed there.
@Suite(.serialized, .timeLimit(.minutes(1)))
@MainActor
struct ReadmeExampleTests {
    @Test func trafficLightRunsItsWholeCycle() async throws {  // FeedbackHostTesting + FeedbackHostClient
        let instance = try await LocalInstance.start()  // the binary on a free port, private data, --clock manual
        defer { instance.stop() }
        let light = try await instance.host.createStore(TrafficLightSystem())
        defer { light.close() }
        light.send(.start)
        try await instance.advance(by: .zero)
        let cycle: [(Phase, Int, Phase)] = [(.red, 4000, .green), (.green, 3000, .yellow), (.yellow, 1000, .red)]
        for (phase, duration, following) in cycle {
            try await instance.advance(by: .milliseconds(duration - 1))
            try await light.settle(atLeast: try await instance.revision(of: light.session))
            #expect(light.state.phase == phase)
            try await instance.advance(by: .milliseconds(1))
            try await light.settle(atLeast: try await instance.revision(of: light.session))
            #expect(light.state.phase == following)
        }
    }

    @Test func theReadmePrintsThisExample() throws {
        let readme = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("README.md")
        let text = try String(contentsOf: readme, encoding: .utf8)
        for line in [
            "typealias Phase = TrafficLightSystem.State.Phase",
            "let light = try await instance.host.createStore(TrafficLightSystem())",
            "let cycle: [(Phase, Int, Phase)] = [(.red, 4000, .green), (.green, 3000, .yellow), (.yellow, 1000, .red)]",
            "try await light.settle(atLeast: try await instance.revision(of: light.session))",
        ] {
            #expect(text.contains(line))
        }
    }
}
