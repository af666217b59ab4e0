import Glibc
import Logging
import MetricsTestKit
import Testing

@testable import HTTPServer

/// The connection cap fits the descriptor limit less the reserve; the server applies it at start.
@Suite(.timeLimit(.minutes(1))) struct DescriptorLimitTests {
    @Test func lowersTheCapToTheLimitLessTheReserve() {
        let limit = DescriptorLimit(soft: 1024, hard: 4096)
        #expect(limit.connectionCap(configured: 10_000, reserve: 64) == 960)
        #expect(limit.connectionCap(configured: 500, reserve: 64) == 500)
        #expect(limit.connectionCap(configured: 10_000, reserve: 0) == 1024)
    }

    @Test func keepsAtLeastOneConnectionAndLeavesAnUnlimitedCapAlone() {
        #expect(DescriptorLimit(soft: 32, hard: 32).connectionCap(configured: 100, reserve: 64) == 1)
        #expect(DescriptorLimit(soft: .max, hard: .max).connectionCap(configured: 100, reserve: 64) == 100)
    }

    @Test func countsFailedAcceptsByErrno() throws {
        let factory = TestMetrics()
        let metrics = ServerMetrics(label: "http_server", factory: factory)
        metrics.acceptFailed(errno: EMFILE)
        metrics.acceptFailed(errno: EMFILE)
        metrics.acceptFailed(errno: ENFILE)
        metrics.acceptFailed(errno: EPERM)
        func count(_ name: String) throws -> Int64 {
            try factory.expectCounter("http_server_accept_errors_total", [("errno", name)]).totalValue
        }
        #expect(try count("EMFILE") == 2)
        #expect(try count("ENFILE") == 1)
        #expect(try count("ENOMEM") == 0)
        #expect(try count("other") == 1)
    }

    @Test func theStartedServerRaisesTheSoftLimitAndReportsTheCapInForce() async throws {
        let configured = 100_000_000
        var configuration = HTTPServerConfiguration(host: "127.0.0.1", port: 0)
        configuration.maxConnections = configured
        configuration.descriptorReserve = 64
        var logger = Logger(label: "HTTPServerTests")
        logger.logLevel = .error  // the lowered cap is logged as a warning
        let server = Server(configuration: configuration, router: testRouter(), logger: logger)
        _ = try server.start()
        let limit = try #require(DescriptorLimit.current())
        #expect(server.maxConnections == limit.connectionCap(configured: configured, reserve: 64))
        #expect(server.maxConnections < configured)
        await server.shutdown(deadline: .seconds(1))
    }
}
