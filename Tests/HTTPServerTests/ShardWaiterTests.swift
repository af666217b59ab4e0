import Dispatch
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
}
