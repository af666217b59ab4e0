import Dispatch
import Glibc
import Logging
import Synchronization
import Testing

@testable import HTTPServer

/// Each shard's waiter thread (`Shard.waitForEvents`): it serves requests and the answers that come after their
/// handler returned (woken through the shard's eventfd), and a shutdown ends it, so that no thread or descriptor
/// of a shard outlives its server.
@Suite(.timeLimit(.minutes(1))) struct ShardWaiterTests {
    @Test func servesLateAnswersAndEndsWithItsServer() async throws {
        var router = Router()
        router.get("/now") { _ in Response.text("now") }
        // Answered from another thread after the handler returned: the way of a journaled post's answer.
        router.route(
            .get,
            "/later",
            deferred: { _, responder in
                DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(5)) {
                    responder.respond(Response.text("later"))
                }
            }
        )
        var logger = Logger(label: "HTTPServerTests")
        logger.logLevel = .warning
        var shards: [Shard] = []
        for _ in 0..<8 {
            let server = Server(
                configuration: HTTPServerConfiguration(host: "127.0.0.1", port: 0, shardCount: 2),
                router: router,
                logger: logger
            )
            let port = try server.start()
            shards += server.core.shards
            // Two connections, so both shards serve (they are dealt round-robin); each asks for a late answer
            // between two answered at once, on one keep-alive connection.
            let bodies = try await offPool { () throws -> [String] in
                var bodies: [String] = []
                for _ in 0..<2 {
                    let client = try TestClient(port: port)
                    for path in ["/now", "/later", "/now"] {
                        client.send("GET \(path) HTTP/1.1\r\nHost: x\r\n\r\n")
                        bodies.append(String(decoding: try client.readResponse().body, as: UTF8.self))
                    }
                }
                return bodies
            }
            #expect(bodies == ["now", "later", "now", "now", "later", "now"])
            await server.shutdown(deadline: .seconds(1))
        }
        // Each waiter ends with its server's shutdown, closing the shard's epoll set and eventfd.
        for _ in 0..<500 where shards.contains(where: { !$0.waiterEnded.load(ordering: .acquiring) }) {
            try await Task.sleep(for: .milliseconds(10))
        }
        #expect(shards.count == 16)
        #expect(shards.allSatisfy { $0.waiterEnded.load(ordering: .acquiring) }, "a waiter outlived its server")
    }

    /// What `Server.whenIdle` hears: each time the last busy shard is about to wait, never while another one is
    /// still working (the journal's gathering window ends there).
    @Test func tellsWhenEveryShardHasGoneIdle() async throws {
        final class Observed: Sendable {
            let inHandler = Atomic<Bool>(false)
            /// Set once the quick request is on its way: a call the hook began before the slow request (its thread
            /// delayed on a loaded machine) is not counted against it.
            let quickSent = Atomic<Bool>(false)
            /// Hook calls, and those made while the slow handler ran after the quick request was sent.
            let calls = Mutex((all: 0, whileBusy: 0))
            var all: Int { calls.withLock { $0.all } }
        }
        let observed = Observed()
        var router = Router()
        router.get("/now") { _ in Response.text("now") }
        router.get("/slow") { _ in
            observed.inHandler.store(true, ordering: .sequentiallyConsistent)
            usleep(300_000)
            observed.inHandler.store(false, ordering: .sequentiallyConsistent)
            return Response.text("slow")
        }
        var logger = Logger(label: "HTTPServerTests")
        logger.logLevel = .warning
        let server = Server(
            configuration: HTTPServerConfiguration(host: "127.0.0.1", port: 0, shardCount: 2),
            router: router,
            logger: logger
        )
        server.whenIdle {
            let busy =
                observed.quickSent.load(ordering: .sequentiallyConsistent)
                && observed.inHandler.load(ordering: .sequentiallyConsistent)
            observed.calls.withLock {
                $0.all += 1
                if busy { $0.whileBusy += 1 }
            }
        }
        let port = try server.start()
        // Both shards wait once they have started: the server is idle.
        for _ in 0..<500 where observed.all == 0 { try await Task.sleep(for: .milliseconds(10)) }
        #expect(observed.all > 0)
        // Connections are dealt round-robin, so these two are served by different shards (both are accepted
        // before either request is sent: shard 0 accepts them). The slow request keeps one shard busy while the
        // other serves a quick one and goes back to waiting, which must not count as the server going idle.
        let (slowClient, quickClient) = try await offPool { (try TestClient(port: port), try TestClient(port: port)) }
        slowClient.send("GET /now HTTP/1.1\r\nHost: x\r\n\r\n")
        quickClient.send("GET /now HTTP/1.1\r\nHost: x\r\n\r\n")
        _ = try await offPool { (try slowClient.readResponse(), try quickClient.readResponse()) }
        let slow = Task {
            try await offPool { () throws -> String in
                slowClient.send("GET /slow HTTP/1.1\r\nHost: x\r\n\r\n")
                return String(decoding: try slowClient.readResponse().body, as: UTF8.self)
            }
        }
        for _ in 0..<500 where !observed.inHandler.load(ordering: .sequentiallyConsistent) {
            try await Task.sleep(for: .milliseconds(5))
        }
        let before = observed.all
        observed.quickSent.store(true, ordering: .sequentiallyConsistent)
        let quick = try await offPool { () throws -> String in
            quickClient.send("GET /now HTTP/1.1\r\nHost: x\r\n\r\n")
            return String(decoding: try quickClient.readResponse().body, as: UTF8.self)
        }
        #expect(quick == "now")
        #expect(try await slow.value == "slow")
        // The slow request's shard is the last to go back to waiting: the server is idle again.
        for _ in 0..<500 where observed.all == before { try await Task.sleep(for: .milliseconds(10)) }
        #expect(observed.all > before)
        #expect(observed.calls.withLock { $0.whileBusy } == 0, "told the server was idle while a shard was busy")
        await server.shutdown(deadline: .seconds(1))
    }
}
