import HTTPServer
import Logging
import Synchronization
import Testing

@Suite(.timeLimit(.minutes(1))) struct ShutdownDeadlineTests {
    @Test func closesWhatIsLeftAtTheDeadline() async throws {
        let release = Mutex<CheckedContinuation<Void, Never>?>(nil)
        let inHandler = Signal<Bool>()
        var router = Router()
        router.get("/never") { _ async in
            await withCheckedContinuation { continuation in
                release.withLock { $0 = continuation }
                inHandler.send(true)
            }
            return Response.text("too late")
        }
        var logger = Logger(label: "HTTPServerTests")
        logger.logLevel = .warning
        let server = Server(
            configuration: HTTPServerConfiguration(host: "127.0.0.1", port: 0),
            router: router,
            logger: logger
        )
        let port = try server.start()
        let client = try TestClient(port: port)
        client.send("GET /never HTTP/1.1\r\nHost: x\r\n\r\n")
        #expect(await inHandler.next() == true)
        await server.shutdown(deadline: .milliseconds(200))
        let closed = try await offPool { [client] in client.waitForClose() }
        #expect(closed)
        #expect(server.connectionCount == 0)
        release.withLock { $0?.resume() }
    }
}
