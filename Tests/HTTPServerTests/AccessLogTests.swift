import HTTPServer
import InMemoryLogging
import Logging
import Testing

@Suite(.timeLimit(.minutes(1))) struct AccessLogTests {
    @Test func logsOneLinePerResponseWithTheConnectionID() async throws {
        let handler = InMemoryLogHandler()
        var logger = Logger(label: "access") { _ in handler }
        logger.logLevel = .info
        let server = Server(
            configuration: HTTPServerConfiguration(host: "127.0.0.1", port: 0),
            router: testRouter(),
            logger: logger
        )
        let port = try server.start()
        let statuses = try await offPool {
            let client = try TestClient(port: port)
            client.send("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\nGET /missing HTTP/1.1\r\nHost: x\r\n\r\n")
            return [try client.readResponse().status, try client.readResponse().status]
        }
        await server.shutdown(deadline: .seconds(1))
        #expect(statuses == [200, 404])
        let lines = handler.entries.filter { $0.metadata["http.status"] != nil }
        #expect(lines.map(\.message.description) == ["GET /healthz 200", "GET /missing 404"])
        #expect(lines.allSatisfy { $0.metadata["connection.id"] != nil && $0.level == .info })
    }
}
