import CurlClient
import MetricsTestKit
import Testing
import Upstream

/// Every request the client makes is counted by outcome and timed.
@Suite(.serialized, .timeLimit(.minutes(1)))
struct UpstreamMetricsTests {
    @Test func requestsAreCountedByOutcomeAndTimed() async throws {
        let metrics = TestMetrics()
        let server = try FixtureServer.start()
        defer { server.stop() }
        let client = CurlFetcher(metricsFactory: metrics)
        _ = try await client.fetch(UpstreamRequest(url: server.url("/json?i=1")))
        _ = try await client.fetch(UpstreamRequest(url: server.url("/json?i=2")))
        _ = try await client.fetch(UpstreamRequest(url: server.url("/status-code?code=503")))
        await #expect(throws: UpstreamError.self) {
            _ = try await client.fetch(UpstreamRequest(url: "http://127.0.0.1:1/refused"))
        }
        await client.shutdown()
        func count(_ outcome: String) throws -> Int64 {
            try metrics.expectCounter("upstream_requests_total", [("outcome", outcome)]).totalValue
        }
        #expect(try count("2xx") == 2)
        #expect(try count("5xx") == 1)
        #expect(try count("failed") == 1)
        #expect(try count("cancelled") == 0)
        #expect(try metrics.expectTimer("upstream_request_duration_seconds").values.count == 4)
    }
}
