import Foundation
import Testing

/// SIGTERM to the real binary while a stream is open: readiness fails at once with a problem and `Retry-After`,
/// the open stream is closed within the drain window, and the process exits 0.
@Suite(.serialized, .timeLimit(.minutes(1)))
struct GracefulShutdownTests {
    @Test func readinessFailsWhileStreamsDrainAndTheProcessExitsCleanly() async throws {
        let server = try RunningServer(arguments: ["--stream-drain-ms", "3000"])
        defer { server.stop() }
        let created = try postJSON("\(server.base)/v1/sessions", #"{"system":"counter"}"#)
        let id = try #require(created.json["id"] as? String)
        let stream = try SSEReader(port: server.port, path: "/v1/sessions/\(id)/stream")
        #expect(try await stream.nextEvent().type == "snapshot")
        #expect(try curl(["\(server.base)/readyz"]).status == 200)

        kill(server.process.processIdentifier, SIGTERM)
        // The stream holds the drain open for up to 3 s, and /readyz answers 503 meanwhile.
        var notReady: CurlResult?
        for _ in 0..<200 where notReady == nil {
            let answer = try curl(["\(server.base)/readyz"])
            if answer.status == 503 { notReady = answer } else { try await Task.sleep(for: .milliseconds(10)) }
        }
        let answer = try #require(notReady)
        #expect(answer.headers["content-type"] == "application/problem+json")
        #expect(answer.headers["retry-after"] != nil)
        #expect((answer.json["detail"] as? String)?.contains("shutting down") == true)

        var item = try await stream.next()
        while case .comment = item { item = try await stream.next() }
        #expect(item == .closed)
        #expect(server.stop() == 0)
    }
}
