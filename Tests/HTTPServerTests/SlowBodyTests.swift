import Dispatch
import Glibc
import HTTPServer
import Synchronization
import Testing

/// A body that trickles in after a complete head is answered 408 (a problem document) and closed, whether it
/// outlasts the body deadline or falls below the minimum rate; a byte now and then does not keep it open.
@Suite(.timeLimit(.minutes(1))) struct SlowBodyTests {
    /// Sends a head declaring a 1,000-byte body, then one body byte at a time until told to stop (the server closes
    /// long before the body is complete), and reads what the server answers.
    private func dripBody(port: Int, path: String = "/echo") async throws -> (TestClient.Response, Bool) {
        try await offPool {
            let client = try TestClient(port: port)
            client.send("POST \(path) HTTP/1.1\r\nHost: x\r\nContent-Type: text/plain\r\nContent-Length: 1000\r\n\r\n")
            let stop = Atomic<Bool>(false)
            let dripped = DispatchSemaphore(value: 0)
            DispatchQueue.global().async {
                // Never more than the body: if the server let the drip go on, the body would complete and get a 200.
                for _ in 0..<999 where !stop.load(ordering: .relaxed) {
                    client.send("a")
                    usleep(5_000)
                }
                dripped.signal()
            }
            let response = try client.readResponse()
            stop.store(true, ordering: .relaxed)
            dripped.wait()
            client.shutdownWrite()
            return (response, client.waitForClose())
        }
    }

    @Test func answersABodyPastItsDeadline408AndClosesThoughBytesKeepComing() async throws {
        var configuration = HTTPServerConfiguration()
        configuration.bodyTimeout = .milliseconds(150)
        configuration.minBodyRate = 0
        try await withServer(configuration, router: testRouter()) { port in
            let (response, closed) = try await dripBody(port: port)
            #expect(response.status == 408)
            #expect(response.header("Content-Type") == "application/problem+json")
            #expect(response.header("Connection") == "close")
            #expect(response.text.contains(#""status":408"#))
            #expect(closed)
        }
    }

    @Test func answersABodyBelowTheMinimumRate408AndCloses() async throws {
        var configuration = HTTPServerConfiguration()
        configuration.bodyTimeout = .seconds(60)
        configuration.minBodyRate = 100_000
        configuration.bodyRateGrace = .milliseconds(100)
        try await withServer(configuration, router: testRouter()) { port in
            let (response, closed) = try await dripBody(port: port)
            #expect(response.status == 408)
            #expect(response.header("Content-Type") == "application/problem+json")
            #expect(closed)
        }
    }

    @Test func aSlowBodyAfterAnEarlyAnswerIsClosedWithoutASecondAnswer() async throws {
        var configuration = HTTPServerConfiguration()
        configuration.bodyTimeout = .milliseconds(150)
        try await withServer(configuration, router: testRouter()) { port in
            let (response, after) = try await offPool {
                let client = try TestClient(port: port)
                client.send("POST /nowhere HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\nab")
                let response = try client.readResponse()
                // The body never completes: the server gives up on it and closes, with nothing more to say.
                return (response, client.readToEnd())
            }
            #expect(response.status == 404)
            #expect(after.isEmpty)
        }
    }

    @Test func answersABodyThatStopsArriving408() async throws {
        var configuration = HTTPServerConfiguration()
        configuration.bodyTimeout = .milliseconds(150)
        try await withServer(configuration, router: testRouter()) { port in
            let (status, closed) = try await offPool {
                let client = try TestClient(port: port)
                client.send("POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\nabc")
                let status = try client.readResponse().status
                client.shutdownWrite()
                return (status, client.waitForClose())
            }
            #expect(status == 408)
            #expect(closed)
        }
    }

    @Test func aBodyThatArrivesWholeIsServedUnderTheSameLimits() async throws {
        var configuration = HTTPServerConfiguration()
        configuration.bodyTimeout = .milliseconds(150)
        configuration.minBodyRate = 100_000
        configuration.bodyRateGrace = .milliseconds(100)
        try await withServer(configuration, router: testRouter()) { port in
            let response = try await offPool {
                let client = try TestClient(port: port)
                client.send("POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello")
                return try client.readResponse()
            }
            #expect(response.status == 200)
            #expect(response.text == "hello")
        }
    }
}
