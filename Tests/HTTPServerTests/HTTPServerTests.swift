import HTTPServer
import Testing

/// The router most integration tests use.
func testRouter() -> Router {
    var router = Router()
    router.get("/healthz") { _ in Response.json(Array(#"{"status":"ok"}"#.utf8)) }
    router.post("/echo", maxBodySize: 1024) { request in
        var response = Response(status: 200, body: request.body)
        response.headers.add(name: "X-Trailer", value: request.trailers["checksum"] ?? "-")
        return response
    }
    router.get("/v1/sessions/{id}/events/{n}") { request in
        Response.text("\(request.parameter("id") ?? "?") \(request.parameter("n") ?? "?")")
    }
    router.get("/async") { request async in
        await Task.yield()
        return Response.text("async \(request.queryParameter("q") ?? "")")
    }
    router.get("/fail") { _ in throw HTTPServerError(.badRequest, "You asked for it.") }
    router.get("/big") { _ in Response.text(String(repeating: "feedback ", count: 1000)) }
    return router
}

@Suite(.timeLimit(.minutes(1))) struct HTTPServerTests {
    @Test func reportsThePortItBoundAndAnswersGet() async throws {
        try await withServer(router: testRouter()) { port in
            #expect(port > 0)
            let response = try await offPool {
                let client = try TestClient(port: port)
                client.send("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
                return try client.readResponse()
            }
            #expect(response.status == 200)
            #expect(response.text == #"{"status":"ok"}"#)
            #expect(response.header("Content-Type") == "application/json")
            #expect(response.header("Date") != nil)
        }
    }

    @Test func keepsTheConnectionAliveAndAnswersPipelinedRequestsInOrder() async throws {
        try await withServer(router: testRouter()) { port in
            let bodies = try await offPool {
                let client = try TestClient(port: port)
                client.send(
                    "GET /v1/sessions/a/events/1 HTTP/1.1\r\nHost: x\r\n\r\n"
                        + "POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello"
                        + "GET /async?q=3 HTTP/1.1\r\nHost: x\r\n\r\n"
                        + "GET /v1/sessions/b%20c/events/4 HTTP/1.1\r\nHost: x\r\n\r\n"
                )
                return try (0..<4).map { _ in try client.readResponse().text }
            }
            #expect(bodies == ["a 1", "hello", "async 3", "b c 4"])
        }
    }

    @Test func pausesReadingWhileAPipeliningClientDoesNotReadAndResumesWhenItDoes() async throws {
        try await withServer(router: testRouter()) { port in
            let count = try await offPool {
                let client = try TestClient(port: port)
                // About 9 MB of answers for 1000 small requests: more than the socket buffers and the backlog limit.
                let requests = String(repeating: "GET /big HTTP/1.1\r\nHost: x\r\n\r\n", count: 1000)
                client.send(requests)
                var count = 0
                for _ in 0..<1000 where try client.readResponse().body.count == 9000 { count += 1 }
                return count
            }
            #expect(count == 1000)
        }
    }

    @Test func parsesARequestSentOneByteAtATime() async throws {
        try await withServer(router: testRouter()) { port in
            let response = try await offPool {
                let client = try TestClient(port: port)
                client.sendInPieces(
                    "POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
                        + "3;ext=1\r\nabc\r\n2\r\nde\r\n0\r\nChecksum: 42\r\n\r\n",
                    size: 1
                )
                return try client.readResponse()
            }
            #expect(response.text == "abcde")
            #expect(response.header("X-Trailer") == "42")
        }
    }

    @Test func answersRoutingErrorsWithProblemDocuments() async throws {
        try await withServer(router: testRouter()) { port in
            let (missing, wrongMethod, unknown, failing) = try await offPool {
                let client = try TestClient(port: port)
                client.send("GET /nope HTTP/1.1\r\nHost: x\r\n\r\n")
                let missing = try client.readResponse()
                client.send("DELETE /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
                let wrongMethod = try client.readResponse()
                client.send("GET /fail HTTP/1.1\r\nHost: x\r\n\r\n")
                let failing = try client.readResponse()
                client.send("BREW /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
                let unknown = try client.readResponse()
                return (missing, wrongMethod, unknown, failing)
            }
            #expect(missing.status == 404)
            #expect(missing.header("Content-Type") == "application/problem+json")
            #expect(wrongMethod.status == 405)
            #expect(wrongMethod.header("Allow") == "GET, HEAD")
            #expect(failing.status == 400)
            #expect(failing.text.contains("You asked for it."))
            #expect(unknown.status == 501)
        }
    }

    @Test func answersHeadWithoutABody() async throws {
        try await withServer(router: testRouter()) { port in
            let (head, next) = try await offPool {
                let client = try TestClient(port: port)
                client.send("HEAD /healthz HTTP/1.1\r\nHost: x\r\n\r\nGET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
                return (try client.readResponse(bodyless: true), try client.readResponse())
            }
            #expect(head.status == 200)
            #expect(head.header("Content-Length") == "15")
            #expect(next.text == #"{"status":"ok"}"#)
        }
    }

    @Test func rejectsSmugglingAttemptsWith400AndCloses() async throws {
        try await withServer(router: testRouter()) { port in
            let (response, closed) = try await offPool {
                let client = try TestClient(port: port)
                client.send(
                    "POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n"
                        + "0\r\n\r\nGET /healthz HTTP/1.1\r\nHost: x\r\n\r\n"
                )
                return (try client.readResponse(), client.waitForClose())
            }
            #expect(response.status == 400)
            #expect(response.header("Connection") == "close")
            #expect(closed)
        }
    }

    @Test(arguments: [
        "\u{0}\u{0}\u{0}\u{0}", String(repeating: "\u{0}", count: 4096), "\u{16}\u{3}\u{1}\u{0}\u{a5}",
        "GET /healthz HTTP/1.1\r\nHost: x, y\r\n\r\n", "GET /healthz HTTP/1.1\r\nHost: x y\r\n\r\n",
        "GET /healthz HTTP/1.1\r\nHost: x<y>\r\n\r\n",
    ])
    func answersGarbageAndBadHostsWith400AtOnceAndCloses(_ bytes: String) async throws {
        // The client's read timeout (5 s) is far below the header timeout: a server waiting for a line end fails.
        try await withServer(router: testRouter()) { port in
            let (response, closed) = try await offPool {
                let client = try TestClient(port: port)
                client.send(bytes)
                return (try client.readResponse(), client.waitForClose())
            }
            #expect(response.status == 400)
            #expect(response.header("Content-Type") == "application/problem+json")
            #expect(closed)
        }
    }

    @Test func answersUnsupportedVersionsWith505() async throws {
        try await withServer(router: testRouter()) { port in
            let response = try await offPool {
                let client = try TestClient(port: port)
                client.send("GET /healthz HTTP/3.0\r\nHost: x\r\n\r\n")
                return try client.readResponse()
            }
            #expect(response.status == 505)
        }
    }

    @Test func answersTooLargeBodiesWith413BeforeReadingThem() async throws {
        try await withServer(router: testRouter()) { port in
            let (response, closed) = try await offPool {
                let client = try TestClient(port: port)
                client.send(
                    "POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 10000000\r\nExpect: 100-continue\r\n\r\n"
                )
                return (try client.readResponse(), client.waitForClose())
            }
            #expect(response.status == 413)
            #expect(closed)
        }
    }

    @Test func sendsContinueWhenTheClientExpectsIt() async throws {
        try await withServer(router: testRouter()) { port in
            let (interim, final) = try await offPool {
                let client = try TestClient(port: port)
                client.send("POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nExpect: 100-continue\r\n\r\n")
                let interim = try client.readResponse()
                client.send("ok")
                return (interim, try client.readResponse())
            }
            #expect(interim.status == 100)
            #expect(final.text == "ok")
        }
    }

    @Test func discardsTheBodyOfAnEarlyAnswerSoTheNextRequestParses() async throws {
        try await withServer(router: testRouter()) { port in
            let (first, second) = try await offPool {
                let client = try TestClient(port: port)
                client.send(
                    "POST /nowhere HTTP/1.1\r\nHost: x\r\nContent-Length: 25\r\n\r\nGET /healthz HTTP/1.1\r\n\r\n"
                        + "GET /v1/sessions/s/events/2 HTTP/1.1\r\nHost: x\r\n\r\n"
                )
                return (try client.readResponse(), try client.readResponse())
            }
            #expect(first.status == 404)
            #expect(second.text == "s 2")
        }
    }

    @Test func answersAnUnknownPathWithATooLargeBodyAndCloses() async throws {
        try await withServer(router: testRouter()) { port in
            let (response, closed) = try await offPool {
                let client = try TestClient(port: port)
                client.send("POST /nowhere HTTP/1.1\r\nHost: x\r\nContent-Length: 10000000\r\n\r\n")
                client.send([UInt8](repeating: 0x61, count: 100_000))
                return (try client.readResponse(), client.waitForClose())
            }
            #expect(response.status == 404)
            #expect(response.header("Connection") == "close")
            #expect(closed)
        }
    }

    @Test func closesAfterConnectionClose() async throws {
        try await withServer(router: testRouter()) { port in
            let (response, closed) = try await offPool {
                let client = try TestClient(port: port)
                client.send("GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
                return (try client.readResponse(), client.waitForClose())
            }
            #expect(response.header("Connection") == "close")
            #expect(closed)
        }
    }

    @Test func keepsHTTP10OpenOnlyWhenAsked() async throws {
        try await withServer(router: testRouter()) { port in
            let (plain, plainClosed, kept, keptAgain) = try await offPool {
                let a = try TestClient(port: port)
                a.send("GET /healthz HTTP/1.0\r\n\r\n")
                let plain = try a.readResponse()
                let plainClosed = a.waitForClose()
                let b = try TestClient(port: port)
                b.send("GET /healthz HTTP/1.0\r\nConnection: keep-alive\r\n\r\n")
                let kept = try b.readResponse()
                b.send("GET /healthz HTTP/1.0\r\nConnection: keep-alive\r\n\r\n")
                return (plain, plainClosed, kept, try b.readResponse())
            }
            #expect(plain.status == 200)
            #expect(plainClosed)
            #expect(kept.header("Connection") == "keep-alive")
            #expect(keptAgain.status == 200)
        }
    }

    @Test func answersClientsThatHalfCloseAfterTheirRequest() async throws {
        try await withServer(router: testRouter()) { port in
            let response = try await offPool {
                let client = try TestClient(port: port)
                client.send("GET /async?q=half HTTP/1.1\r\nHost: x\r\n\r\n")
                client.shutdownWrite()
                return try client.readResponse()
            }
            #expect(response.text == "async half")
        }
    }

    @Test func answersEveryPipelinedRequestAndErrorsBeforeAHalfClose() async throws {
        try await withServer(router: testRouter()) { port in
            let (answers, error) = try await offPool {
                let client = try TestClient(port: port)
                client.send(String(repeating: "GET /big HTTP/1.1\r\nHost: x\r\n\r\n", count: 300))
                client.shutdownWrite()
                let answers = try (0..<300).filter { _ in try client.readResponse().status == 200 }.count
                let bad = try TestClient(port: port)
                bad.send("GARBAGE\r\n\r\n")
                bad.shutdownWrite()
                return (answers, try bad.readResponse().status)
            }
            #expect(answers == 300)
            #expect(error == 400)
        }
    }

    @Test func compressesLargeBodiesWhenTheClientAcceptsGzip() async throws {
        try await withServer(router: testRouter()) { port in
            let (gzip, plain) = try await offPool {
                let client = try TestClient(port: port)
                client.send("GET /big HTTP/1.1\r\nHost: x\r\nAccept-Encoding: br;q=1, gzip;q=0.5\r\n\r\n")
                let gzip = try client.readResponse()
                client.send("GET /big HTTP/1.1\r\nHost: x\r\nAccept-Encoding: gzip;q=0\r\n\r\n")
                return (gzip, try client.readResponse())
            }
            #expect(gzip.header("Content-Encoding") == "gzip")
            #expect(gzip.body.count < 1000)
            #expect(Array(gzip.body.prefix(2)) == [0x1F, 0x8B])
            #expect(plain.header("Content-Encoding") == nil)
            #expect(plain.body.count == 9000)
        }
    }
}
