import Foundation
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The Swift example of docs/API.md and the README ("A clock tests move"), as it is printed there: Foundation's
/// `URLSession` against a server started with `--clock manual`. Only the server's start differs (the docs start it
/// by hand; here `RunningServer` starts the binary on a free port).
@Suite(.serialized, .timeLimit(.minutes(1)))
struct ManualClockExampleTests {
    /// A client of a FeedbackHost started with `--clock manual`.
    struct Host {
        let base: String

        @discardableResult
        func call(_ method: String, _ path: String, _ body: [String: Any]? = nil) async throws -> [String: Any] {
            var request = URLRequest(url: URL(string: base + path)!)
            request.httpMethod = method
            if let body {
                request.httpBody = try JSONSerialization.data(withJSONObject: body)
                request.setValue("application/json", forHTTPHeaderField: "Content-Type")
            }
            let (data, _) = try await URLSession.shared.data(for: request)
            return try JSONSerialization.jsonObject(with: data) as? [String: Any] ?? [:]
        }

        /// Moves the clock; answers once every timer due fired and what it started has settled.
        func advance(milliseconds: Int) async throws {
            try await call("POST", "/v1/clock/advance", ["milliseconds": milliseconds])
        }

        func state(_ id: String) async throws -> [String: Any] {
            try await call("GET", "/v1/sessions/\(id)")["state"] as? [String: Any] ?? [:]
        }
    }

    @Test func trafficLightRunsItsWholeCycle() async throws {
        let server = try RunningServer(arguments: ["--clock", "manual"])
        defer { server.stop() }
        let host = Host(base: server.base)

        let light = try await host.call("POST", "/v1/sessions", ["system": "traffic-light"])["id"] as! String
        try await host.call("POST", "/v1/sessions/\(light)/events", ["type": "start"])
        try await host.advance(milliseconds: 0)  // the first phase's deadline is in the state once this answers
        let cycle = [("red", 4000, "green"), ("green", 3000, "yellow"), ("yellow", 1000, "red")]
        for (phase, duration, following) in cycle {
            try await host.advance(milliseconds: duration - 1)
            #expect(try await host.state(light)["phase"] as? String == phase)
            try await host.advance(milliseconds: 1)
            #expect(try await host.state(light)["phase"] as? String == following)
        }
        #expect(try await host.state(light)["changes"] as? Int == 3)
    }

    @Test func playCatchThrowsBackAfterOneSecond() async throws {
        let server = try RunningServer(arguments: ["--clock", "manual"])
        defer { server.stop() }
        let host = Host(base: server.base)

        let game = try await host.call("POST", "/v1/sessions", ["system": "catch"])["id"] as! String
        try await host.call("POST", "/v1/sessions/\(game)/events", ["type": "throwToMachine"])
        try await host.advance(milliseconds: 999)
        #expect(try await host.state(game)["holder"] as? String == "machine")
        try await host.advance(milliseconds: 1)
        #expect(try await host.state(game)["holder"] as? String == "human")
    }
}
