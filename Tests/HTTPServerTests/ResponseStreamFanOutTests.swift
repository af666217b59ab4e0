import Dispatch
import Synchronization
import Testing

@testable import HTTPServer

/// `ResponseStream.write(_:to:completion:)`, the fan-out path, and `isIdle`, which producers that keep only the
/// latest state use to hold at most one frame per stream inside the server.
@Suite(.timeLimit(.minutes(1))) struct ResponseStreamFanOutTests {
    @Test func fanOutReachesEveryStreamAcrossSlicesAndCompletesOnce() async throws {
        let count = ResponseStream.sliceSize * 2 + 17
        let streams = OpenedStreams()
        try await withServer(router: streams.router) { port in
            let clients = try await openStreams(count, port: port)
            #expect(await streams.waitFor(count) == count)
            let completions = Atomic<Int>(0)
            let done = Signal<Bool>()
            let frame = ServerSentEvent(id: "1", event: "snapshot", data: "{}").encoded
            ResponseStream.write(frame, to: streams.all) {
                completions.add(1, ordering: .relaxed)
                done.send(true)
            }
            #expect(await done.next() == true)
            let received = try await offPool { try clients.map { try $0.readChunk() } }
            #expect(received.allSatisfy { $0 == frame })
            #expect(completions.load(ordering: .relaxed) == 1)
            for stream in streams.all { stream.finish() }
        }
    }

    /// The hub's way: a frame's streams added one by one and sent in parts, across two shards. Each open stream gets
    /// the frame once, an ended one nothing (though it counts towards the part), and each part's completion runs once.
    @Test func aFanOutSentInPartsReachesEachOpenStreamOnce() async throws {
        let count = 7
        let streams = OpenedStreams()
        let configuration = HTTPServerConfiguration(host: "127.0.0.1", port: 0, shardCount: 2)
        try await withServer(configuration, router: streams.router) { port in
            let clients = try await openStreams(count, port: port)
            #expect(await streams.waitFor(count) == count)
            let all = streams.all
            #expect(Set(all.map { ObjectIdentifier($0.shard) }).count == 2)
            all[4].finish()
            let frame = ServerSentEvent(id: "7", event: "patch", data: "[]").encoded
            let completions = Atomic<Int>(0)
            let done = Signal<Int>()
            var fanOut = ResponseStream.FanOut(frame)
            for stream in all[..<3] { fanOut.add(stream) }
            #expect(fanOut.added == 3)
            fanOut.send { done.send(completions.add(1, ordering: .relaxed).newValue) }
            #expect(fanOut.added == 0)
            for stream in all[3...] { fanOut.add(stream) }
            #expect(fanOut.added == count - 3)
            fanOut.send { done.send(completions.add(1, ordering: .relaxed).newValue) }
            // Both parts complete, once each (in either order: each reports the count it reached).
            let first = await done.next()
            let second = await done.next()
            #expect(Set([first, second]) == [1, 2])
            // The ended stream's client reads the last chunk; the others, the frame.
            let received = try await offPool { try clients.map { try $0.readChunk() } }
            for (index, chunk) in received.enumerated() {
                #expect(chunk == (index == 4 ? nil : frame), "stream \(index)")
            }
            for (index, stream) in all.enumerated() where index != 4 { stream.finish() }
            let ends = try await offPool {
                try clients.enumerated().filter { $0.offset != 4 }.map { try $0.element.readChunk() }
            }
            #expect(ends.allSatisfy { $0 == nil })
            #expect(completions.load(ordering: .relaxed) == 2)
        }
    }

    /// The hub's parts are each a block of their own on the shard's queue, all queued before the waiter gets its turn
    /// (`queue.sync`): a request that arrives meanwhile is served before the first slice (`serveBetweenSlices`), not
    /// after the first slice of every part. The shard's queue is held shut while three one-slice parts and the request
    /// arrive, so the order is the queue's, not a race.
    @Test func aRequestWaitsForOneSliceOfAFanOutInPartsNotForEveryPart() async throws {
        let perPart = ResponseStream.sliceSize
        let streams = OpenedStreams()
        var router = streams.router
        let unwrittenWhenServed = Signal<Int>()
        router.get("/ping") { [streams] _ in
            unwrittenWhenServed.send(streams.all.filter { !$0.isIdle }.count)
            return Response.text("pong")
        }
        let configuration = HTTPServerConfiguration(host: "127.0.0.1", port: 0, shardCount: 1)
        try await withServer(configuration, router: router) { port in
            let clients = try await openStreams(3 * perPart, port: port)
            #expect(await streams.waitFor(3 * perPart) == 3 * perPart)
            let pinger = try await offPool { try TestClient(port: port) }
            // Its connection made and on the shard's epoll set before the queue is held.
            #expect(try await offPool { try pinger.exchange("GET /ping HTTP/1.1\r\nHost: x\r\n\r\n") }.status == 200)
            #expect(await unwrittenWhenServed.next() == 0)
            let all = streams.all
            let gate = DispatchSemaphore(value: 0)
            all[0].shard.queue.async { gate.wait() }
            let frame = ServerSentEvent(id: "9", event: "snapshot", data: "{}").encoded
            let completions = Signal<Bool>()
            var fanOut = ResponseStream.FanOut(frame, capacity: perPart)
            for part in 0..<3 {
                for stream in all[(part * perPart)..<((part + 1) * perPart)] { fanOut.add(stream) }
                fanOut.send { completions.send(true) }
            }
            pinger.send("GET /ping HTTP/1.1\r\nHost: x\r\n\r\n")  // in the server's socket when `send` returns
            gate.signal()
            // Served before any of the parts' frames went out: all three parts unwritten (without the serving
            // between slices, after the first slice of each part: none).
            #expect(await unwrittenWhenServed.next() == 3 * perPart)
            #expect(try await offPool { try pinger.readResponse() }.status == 200)
            for _ in 0..<3 { #expect(await completions.next() == true) }
            let received = try await offPool { try clients.map { try $0.readChunk() } }
            #expect(received.allSatisfy { $0 == frame })
            for stream in all { stream.finish() }
        }
    }

    @Test func aFanOutOfNoBytesTakesNoStreamAndCompletesAtOnce() async throws {
        let streams = OpenedStreams()
        try await withServer(router: streams.router) { port in
            let client = try await openStreams(1, port: port)[0]
            #expect(await streams.waitFor(1) == 1)
            let stream = streams.all[0]
            var fanOut = ResponseStream.FanOut([])
            fanOut.add(stream)
            #expect(fanOut.added == 1)
            let ran = Atomic<Bool>(false)
            fanOut.send { ran.store(true, ordering: .relaxed) }
            let completedAtOnce = ran.load(ordering: .relaxed)
            #expect(completedAtOnce)
            #expect(stream.isIdle)
            stream.finish()
            #expect(try await offPool { try client.readChunk() } == nil)
        }
    }

    @Test func aWriteWaitingForTheShardKeepsTheStreamBusyUntilItIsOut() async throws {
        let busyBehindWrite = Signal<Bool>()
        let idleAfterCompletion = Signal<Bool>()
        var router = Router()
        router.get("/events") { _ in
            Response.eventStream { stream in
                // The start runs on the shard's queue, so this write cannot be handed over before it returns.
                stream.write(Array("one".utf8))
                busyBehindWrite.send(!stream.isIdle)
                ResponseStream.write(Array("two".utf8), to: [stream]) {
                    idleAfterCompletion.send(stream.isIdle)
                    stream.finish()
                }
            }
        }
        try await withServer(router: router) { port in
            let chunks = try await offPool {
                let client = try TestClient(port: port)
                client.send("GET /events HTTP/1.1\r\nHost: x\r\n\r\n")
                while try !client.readLine().isEmpty {}
                var chunks: [String] = []
                while let chunk = try client.readChunk() { chunks.append(String(decoding: chunk, as: UTF8.self)) }
                return chunks
            }
            #expect(await busyBehindWrite.next() == true)
            #expect(await idleAfterCompletion.next() == true)
            #expect(chunks == ["one", "two"])
        }
    }

    @Test func completionRunsAtOnceWhenNoStreamTakesTheBytes() async throws {
        let ranBeforeReturning = Signal<Bool>()
        var router = Router()
        router.get("/events") { _ in
            Response.eventStream { stream in
                stream.finish()
                let ran = Atomic<Bool>(false)
                ResponseStream.write(Array("late".utf8), to: [stream]) { ran.store(true, ordering: .relaxed) }
                ranBeforeReturning.send(ran.load(ordering: .relaxed))
            }
        }
        try await withServer(router: router) { port in
            let body = try await offPool {
                let client = try TestClient(port: port)
                client.send("GET /events HTTP/1.1\r\nHost: x\r\n\r\n")
                while try !client.readLine().isEmpty {}
                return try client.readChunk()
            }
            #expect(await ranBeforeReturning.next() == true)
            #expect(body == nil)
        }
    }
}

/// `count` clients, each with a `GET /events` stream open (its response head read).
private func openStreams(_ count: Int, port: Int) async throws -> [TestClient] {
    try await offPool {
        try (0..<count).map { _ in
            let client = try TestClient(port: port)
            client.send("GET /events HTTP/1.1\r\nHost: x\r\n\r\n")
            while try !client.readLine().isEmpty {}
            return client
        }
    }
}

/// A router whose `GET /events` keeps every stream it opens: a fan-out's subscribers, for the tests that write to them.
final class OpenedStreams: Sendable {
    private let streams = Mutex<[ResponseStream]>([])
    private let opened = Signal<Int>()

    var router: Router {
        var router = Router()
        router.get("/events") { [self] _ in
            Response.eventStream { [self] stream in
                opened.send(
                    streams.withLock {
                        $0.append(stream)
                        return $0.count
                    }
                )
            }
        }
        return router
    }

    /// The streams opened so far.
    var all: [ResponseStream] { streams.withLock { $0 } }

    /// Waits until `count` streams are open (or the signal ends); how many are.
    func waitFor(_ count: Int) async -> Int {
        var seen = 0
        while seen < count, let next = await opened.next() { seen = next }
        return seen
    }
}
