import HTTPServer
import Synchronization
import Testing

@Suite(.timeLimit(.minutes(1))) struct ResponseStreamTests {
    @Test func writesServerSentEventsAsChunksAndFinishes() async throws {
        var router = Router()
        router.get("/events") { _ in
            Response.eventStream { stream in
                stream.writeEvent(ServerSentEvent(id: "1", event: "state", data: "a\nb"))
                stream.writeComment("ping")
                stream.finish()
            }
        }
        try await withServer(router: router) { port in
            let (response, next) = try await offPool {
                let client = try TestClient(port: port)
                client.send("GET /events HTTP/1.1\r\nHost: x\r\n\r\nGET /events HTTP/1.1\r\nHost: x\r\n\r\n")
                return (try client.readResponse(), try client.readResponse())
            }
            #expect(response.header("Content-Type") == "text/event-stream")
            #expect(response.header("Transfer-Encoding") == "chunked")
            let expected =
                ServerSentEvent(id: "1", event: "state", data: "a\nb").encoded + ServerSentEvent.comment("ping")
            #expect(response.body == expected)
            #expect(response.text.contains("data: a\ndata: b\n"))
            #expect(next.text == response.text)
        }
    }

    @Test func tellsTheHandlerWhenTheClientGoesAway() async throws {
        let closed = Signal<ResponseStream.CloseReason>()
        let started = Signal<Bool>()
        var router = Router()
        router.get("/events") { _ in
            Response.eventStream { stream in
                stream.onClose { closed.send($0) }
                stream.writeEvent(ServerSentEvent(data: "hello"))
                started.send(true)
            }
        }
        try await withServer(router: router) { port in
            let first = try await offPool {
                let client = try TestClient(port: port)
                client.send("GET /events HTTP/1.1\r\nHost: x\r\n\r\n")
                _ = try client.readLine()
                return true
            }
            #expect(first)
            #expect(await started.next() == true)
            #expect(await closed.next() == .clientGone)
        }
    }

    @Test func reportsASlowClientAndCallsOnWritableWhenItCatchesUp() async throws {
        let slow = Signal<Bool>()
        let writable = Signal<Bool>()
        let box = Mutex<ResponseStream?>(nil)
        var configuration = HTTPServerConfiguration()
        configuration.streamHighWaterMark = 64 * 1024
        var router = Router()
        router.get("/flood") { _ in
            Response(status: 200) { stream in
                box.withLock { $0 = stream }
                stream.onWritable { writable.send(true) }
                let block = [UInt8](repeating: UInt8(ascii: "x"), count: 16 * 1024)
                // Far more than the socket buffers hold: the stream must report back-pressure.
                for _ in 0..<1024 { stream.write(block) }
                slow.send(!stream.isWritable)
            }
        }
        try await withServer(configuration, router: router) { port in
            let client = try TestClient(port: port)
            client.send("GET /flood HTTP/1.1\r\nHost: x\r\n\r\n")
            #expect(await slow.next() == true)
            let total = try await offPool { [client] in
                while try !client.readLine().isEmpty {}
                var total = 0
                while let chunk = try client.readChunk() {
                    total += chunk.count
                    if total >= 1024 * 16 * 1024 { break }
                }
                return total
            }
            #expect(total == 1024 * 16 * 1024)
            #expect(await writable.next() == true)
            #expect(box.withLock { $0?.isWritable } == true)
            box.withLock { $0?.finish() }
        }
    }

    @Test func closesAStreamWhoseClientStopsReading() async throws {
        let closed = Signal<ResponseStream.CloseReason>()
        var configuration = HTTPServerConfiguration()
        configuration.writeTimeout = .milliseconds(200)
        var router = Router()
        router.get("/flood") { _ in
            Response(status: 200) { stream in
                stream.onClose { closed.send($0) }
                let block = [UInt8](repeating: 0, count: 64 * 1024)
                for _ in 0..<256 { stream.write(block) }
            }
        }
        try await withServer(configuration, router: router) { port in
            let client = try TestClient(port: port)
            client.send("GET /flood HTTP/1.1\r\nHost: x\r\n\r\n")
            #expect(await closed.next() == .writeStalled)
            _ = client
        }
    }

    @Test func streamsCompressedEventsWithOneSyncFlushEach() async throws {
        var router = Router()
        router.get("/events") { _ in
            Response.eventStream { stream in
                stream.writeEvent(ServerSentEvent(data: "one"))
                stream.writeEvent(ServerSentEvent(data: "two"))
                stream.finish()
            }
        }
        try await withServer(router: router) { port in
            let chunks = try await offPool {
                let client = try TestClient(port: port)
                client.send("GET /events HTTP/1.1\r\nHost: x\r\nAccept-Encoding: gzip\r\n\r\n")
                var headers: [String] = []
                while true {
                    let line = try client.readLine()
                    if line.isEmpty { break }
                    headers.append(line)
                }
                var chunks: [[UInt8]] = []
                while let chunk = try client.readChunk() { chunks.append(chunk) }
                return (headers, chunks)
            }
            #expect(chunks.0.contains("Content-Encoding: gzip"))
            // One chunk per event, each ending in the sync-flush marker, then the gzip trailer.
            #expect(chunks.1.count == 3)
            #expect(chunks.1.prefix(2).allSatisfy { $0.suffix(4) == [0x00, 0x00, 0xFF, 0xFF] })
            #expect(Array(chunks.1[0].prefix(2)) == [0x1F, 0x8B])
        }
    }
}
