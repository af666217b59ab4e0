import Dispatch
import HTTPServer
import Synchronization
import Testing

/// Routes that answer through a `Responder`: inline, later from another thread, or never (500).
@Suite(.timeLimit(.minutes(1))) struct DeferredRouteTests {
    /// Responders a route kept without answering.
    final class Held: Sendable {
        private let responders = Mutex<[Responder]>([])
        func keep(_ responder: Responder) { responders.withLock { $0.append(responder) } }
        func take() -> Responder? { responders.withLock { $0.popLast() } }
    }

    private func router(held: Held) -> Router {
        var router = Router()
        router.route(.get, "/inline") { (_: Request, responder: Responder) in
            responder.respond(.text("inline"))
            responder.respond(.text("ignored second answer"))
        }
        router.route(.get, "/later/{n}") { (request: Request, responder: Responder) in
            let n = request.parameter("n") ?? "?"
            DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(20)) {
                responder.respond(.text("later \(n)"))
            }
        }
        router.route(.get, "/held") { (_: Request, responder: Responder) in
            held.keep(responder)
        }
        router.route(.get, "/dropped") { (_: Request, _: Responder) in }
        return router
    }

    @Test func answersGivenInlineOrLaterArriveInRequestOrder() async throws {
        let held = Held()
        try await withServer(router: router(held: held)) { port in
            let texts = try await offPool {
                let client = try TestClient(port: port)
                client.send(
                    "GET /later/1 HTTP/1.1\r\nHost: x\r\n\r\n" + "GET /inline HTTP/1.1\r\nHost: x\r\n\r\n"
                        + "GET /later/2 HTTP/1.1\r\nHost: x\r\n\r\n"
                )
                return try (0..<3).map { _ in try client.readResponse().text }
            }
            #expect(texts == ["later 1", "inline", "later 2"])
        }
    }

    /// A late answer is written from what the connection kept of its request: its `Accept-Encoding` (gzip), and a
    /// HEAD request's answer without a body.
    @Test func aLateAnswerIsCompressedAndBodilessAsItsRequestAsked() async throws {
        var router = Router()
        let text = String(repeating: "a late answer long enough to be compressed. ", count: 100)
        router.route(.get, "/big") { (_: Request, responder: Responder) in
            DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(10)) { responder.respond(.text(text)) }
        }
        try await withServer(router: router) { port in
            let (gzipped, plain, head) = try await offPool {
                let client = try TestClient(port: port)
                return (
                    try client.exchange("GET /big HTTP/1.1\r\nHost: x\r\nAccept-Encoding: gzip\r\n\r\n"),
                    try client.exchange("GET /big HTTP/1.1\r\nHost: x\r\n\r\n"),
                    try client.exchange("HEAD /big HTTP/1.1\r\nHost: x\r\n\r\n", bodyless: true)
                )
            }
            #expect(gzipped.header("Content-Encoding") == "gzip")
            #expect(plain.header("Content-Encoding") == nil && plain.text == text)
            #expect(head.status == 200 && head.body.isEmpty)
        }
    }

    @Test func aResponderAnsweredFromAnotherThreadCompletesTheRequest() async throws {
        let held = Held()
        try await withServer(router: router(held: held)) { port in
            let client = try TestClient(port: port)
            client.send("GET /held HTTP/1.1\r\nHost: x\r\n\r\n")
            var responder: Responder?
            for _ in 0..<500 where responder == nil {
                responder = held.take()
                if responder == nil { try await Task.sleep(for: .milliseconds(10)) }
            }
            try #require(responder).respond(Response.text("from a test thread"))
            let response = try await offPool { try client.readResponse() }
            #expect(response.status == 200)
            #expect(response.text == "from a test thread")
        }
    }

    @Test func aResponderDroppedWithoutAnAnswerSends500() async throws {
        let held = Held()
        try await withServer(router: router(held: held)) { port in
            let response = try await offPool {
                let client = try TestClient(port: port)
                client.send("GET /dropped HTTP/1.1\r\nHost: x\r\n\r\n")
                return try client.readResponse()
            }
            #expect(response.status == 500)
        }
    }
}
