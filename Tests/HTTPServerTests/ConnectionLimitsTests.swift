import HTTPServer
import Logging
import Synchronization
import Testing

@Suite(.timeLimit(.minutes(1))) struct ConnectionLimitsTests {
    private func shortTimeouts() -> HTTPServerConfiguration {
        var configuration = HTTPServerConfiguration()
        configuration.headerTimeout = .milliseconds(200)
        configuration.bodyTimeout = .milliseconds(200)
        configuration.idleTimeout = .milliseconds(200)
        return configuration
    }

    @Test func closesAClientThatTricklesItsHeadWithoutHurtingOthers() async throws {
        try await withServer(shortTimeouts(), router: testRouter()) { port in
            let (closed, other) = try await offPool {
                let slow = try TestClient(port: port)
                slow.send("GET /healthz HTTP/1.1\r\nHo")
                let fast = try TestClient(port: port)
                fast.send("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
                let other = try fast.readResponse()
                // Keep trickling: the header deadline counts from the first byte, not from the last.
                slow.send("s")
                return (slow.waitForClose(), other)
            }
            #expect(closed)
            #expect(other.status == 200)
        }
    }

    @Test func closesABodyThatStopsArriving() async throws {
        try await withServer(shortTimeouts(), router: testRouter()) { port in
            let closed = try await offPool {
                let client = try TestClient(port: port)
                client.send("POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\nabc")
                return client.waitForClose()
            }
            #expect(closed)
        }
    }

    @Test func closesIdleKeepAliveConnections() async throws {
        try await withServer(shortTimeouts(), router: testRouter()) { port in
            let (response, closed) = try await offPool {
                let client = try TestClient(port: port)
                client.send("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
                return (try client.readResponse(), client.waitForClose())
            }
            #expect(response.status == 200)
            #expect(closed)
        }
    }

    @Test func answersConnectionsOverTheCapWith503() async throws {
        var configuration = HTTPServerConfiguration()
        configuration.maxConnections = 1
        try await withServer(configuration, router: testRouter()) { port in
            let (first, rejected, closed) = try await offPool {
                let first = try TestClient(port: port)
                first.send("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
                let ok = try first.readResponse()
                let second = try TestClient(port: port)
                let rejected = try second.readResponse()
                return (ok, rejected, second.waitForClose())
            }
            #expect(first.status == 200)
            #expect(rejected.status == 503)
            #expect(closed)
        }
    }

    @Test func shutdownEndsStreamsClosesIdleConnectionsAndLetsRequestsFinish() async throws {
        let reasons = Signal<ResponseStream.CloseReason>()
        let release = Mutex<CheckedContinuation<Void, Never>?>(nil)
        let inHandler = Signal<Bool>()
        var router = Router()
        router.get("/events") { _ in
            Response.eventStream { stream in
                stream.onClose { reasons.send($0) }
                stream.writeEvent(ServerSentEvent(data: "hi"))
            }
        }
        router.get("/slow") { _ async in
            await withCheckedContinuation { continuation in
                release.withLock { $0 = continuation }
                inHandler.send(true)
            }
            return Response.text("finished")
        }
        router.get("/healthz") { _ in Response.text("ok") }
        var logger = Logger(label: "HTTPServerTests")
        logger.logLevel = .warning
        let server = Server(
            configuration: HTTPServerConfiguration(host: "127.0.0.1", port: 0),
            router: router,
            logger: logger
        )
        let port = try server.start()
        let streaming = try TestClient(port: port)
        streaming.send("GET /events HTTP/1.1\r\nHost: x\r\n\r\n")
        let idle = try TestClient(port: port)
        idle.send("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
        let busy = try TestClient(port: port)
        busy.send("GET /slow HTTP/1.1\r\nHost: x\r\n\r\n")
        #expect(await inHandler.next() == true)
        let idleStatus = try await offPool { [idle] in try idle.readResponse().status }
        #expect(idleStatus == 200)

        async let stopped: Void = server.shutdown(deadline: .seconds(10))
        #expect(await reasons.next() == .serverShutdown)
        release.withLock { $0?.resume() }
        let (streamBody, slow, idleClosed) = try await offPool { [streaming, busy, idle] in
            (try streaming.readResponse(), try busy.readResponse(), idle.waitForClose())
        }
        await stopped
        #expect(String(decoding: streamBody.body, as: UTF8.self) == "data: hi\n\n")
        #expect(slow.text == "finished")
        #expect(slow.header("Connection") == "close")
        #expect(idleClosed)
        #expect(server.connectionCount == 0)
    }
}
