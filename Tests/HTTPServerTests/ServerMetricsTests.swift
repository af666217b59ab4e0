import HTTPServer
import MetricsTestKit
import Testing

/// Each test hands the server its own `TestMetrics` factory, so nothing touches the process-wide `MetricsSystem`
/// and the tests may run in parallel.
@Suite(.timeLimit(.minutes(1))) struct ServerMetricsTests {
    private func configuration(_ metrics: TestMetrics, maxConnections: Int = 10_000) -> HTTPServerConfiguration {
        HTTPServerConfiguration(host: "127.0.0.1", port: 0, maxConnections: maxConnections, metricsFactory: metrics)
    }

    private func responses(_ metrics: TestMetrics, _ statusClass: String) throws -> Int64 {
        try metrics.expectCounter("http_server_responses_total", [("status", statusClass)]).totalValue
    }

    /// Polls `condition` every 10 ms for up to `seconds`; false when it never held.
    private func eventually(within seconds: Int = 5, _ condition: () throws -> Bool) async rethrows -> Bool {
        for _ in 0..<(seconds * 100) {
            if try condition() { return true }
            try? await Task.sleep(for: .milliseconds(10))
        }
        return try condition()
    }

    @Test func countsResponsesByStatusClassAndTimesParsedRequests() async throws {
        let metrics = TestMetrics()
        try await withServer(configuration(metrics), router: testRouter()) { port in
            let (ok, missing, malformed) = try await offPool {
                let a = try TestClient(port: port)
                a.send("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
                let ok = try a.readResponse()
                let b = try TestClient(port: port)
                b.send("GET /nowhere HTTP/1.1\r\nHost: x\r\n\r\n")
                let missing = try b.readResponse()
                let c = try TestClient(port: port)
                c.send("GET /healthz HTTP/1.1\r\nHost: x\r\nNo colon here\r\n\r\n")
                let malformed = try c.readResponse()
                return (ok.status, missing.status, malformed.status)
            }
            #expect(ok == 200)
            #expect(missing == 404)
            #expect(malformed == 400)
            // Each counter moves before its response is written, so reading the response is the signal.
            #expect(try responses(metrics, "2xx") == 1)
            #expect(try responses(metrics, "4xx") == 2)
            #expect(try responses(metrics, "1xx") == 0)
            #expect(try responses(metrics, "3xx") == 0)
            #expect(try responses(metrics, "5xx") == 0)
            // The malformed head never parsed on a fresh connection, so only the other two have a start to time.
            let timer = try metrics.expectTimer("http_server_request_duration_seconds")
            #expect(timer.values.count == 2)
            #expect(timer.values.allSatisfy { $0 >= 0 })
        }
    }

    @Test func keepAliveRequestsOnOneConnectionEachCountAndTime() async throws {
        let metrics = TestMetrics()
        try await withServer(configuration(metrics), router: testRouter()) { port in
            let statuses = try await offPool {
                let client = try TestClient(port: port)
                return try (0..<3).map { _ in
                    client.send("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
                    return try client.readResponse().status
                }
            }
            #expect(statuses == [200, 200, 200])
            #expect(try responses(metrics, "2xx") == 3)
            #expect(try metrics.expectTimer("http_server_request_duration_seconds").values.count == 3)
        }
    }

    @Test func aMalformedHeadAfterAKeepAliveRequestIsNotTimedFromTheEarlierRequest() async throws {
        let metrics = TestMetrics()
        try await withServer(configuration(metrics), router: testRouter()) { port in
            let statuses = try await offPool {
                let client = try TestClient(port: port)
                client.send("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
                let ok = try client.readResponse().status
                client.send("GET /healthz HTTP/1.1\r\nHost: x\r\nNo colon here\r\n\r\n")
                return [ok, try client.readResponse().status]
            }
            #expect(statuses == [200, 400])
            #expect(try responses(metrics, "4xx") == 1)
            #expect(try metrics.expectTimer("http_server_request_duration_seconds").values.count == 1)
        }
    }

    @Test func connectionGaugeRisesWithOpenConnectionsAndFallsBackToZero() async throws {
        let metrics = TestMetrics()
        try await withServer(configuration(metrics), router: testRouter()) { port in
            var clients: [TestClient] = []
            for _ in 0..<2 {
                let client = try TestClient(port: port)
                let status = try await offPool {
                    client.send("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
                    return try client.readResponse().status
                }
                #expect(status == 200)
                clients.append(client)
            }
            let gauge = try metrics.expectMeter("http_server_connections")
            // Both sockets were adopted (and counted) before they were answered.
            #expect(gauge.lastValue == 2)
            clients.removeAll()  // closes both sockets
            #expect(await eventually { gauge.lastValue == 0 })
            #expect(gauge.values.max() == 2)
        }
    }

    @Test func countsEveryByteTheClientReceives() async throws {
        let metrics = TestMetrics()
        try await withServer(configuration(metrics), router: testRouter()) { port in
            let received = try await offPool {
                let client = try TestClient(port: port)
                client.send("GET /big HTTP/1.1\r\nHost: x\r\n\r\n")
                client.send("GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
                return client.readToEnd().count
            }
            #expect(received > 9000)
            #expect(try metrics.expectCounter("http_server_bytes_sent_total").totalValue == Int64(received))
        }
    }

    /// A fan-out counts its bytes once a pass, not once a subscriber: the counter still ends at every byte the
    /// subscribers received (heads, frames and the last chunks), over several passes and streams.
    @Test func countsEveryByteOfAFanOut() async throws {
        let metrics = TestMetrics()
        let streams = OpenedStreams()
        let count = 5
        try await withServer(configuration(metrics), router: streams.router) { port in
            let clients = try await offPool {
                try (0..<count).map { _ in
                    let client = try TestClient(port: port)
                    client.send("GET /events HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
                    return client
                }
            }
            #expect(await streams.waitFor(count) == count)
            for pass in 0..<3 {
                let done = Signal<Bool>()
                let frame = ServerSentEvent(id: "\(pass)", event: "snapshot", data: "{\"pass\":\(pass)}").encoded
                ResponseStream.write(frame, to: streams.all) { done.send(true) }
                #expect(await done.next() == true)
            }
            for stream in streams.all { stream.finish() }
            let received = try await offPool { clients.map { $0.readToEnd().count } }
            #expect(received.allSatisfy { $0 > 3 * 20 })
            #expect(
                try metrics.expectCounter("http_server_bytes_sent_total").totalValue == Int64(received.reduce(0, +))
            )
        }
    }

    @Test func countsConnectionsRejectedOverTheCap() async throws {
        let metrics = TestMetrics()
        try await withServer(configuration(metrics, maxConnections: 1), router: testRouter()) { port in
            let (first, second) = try await offPool {
                let first = try TestClient(port: port)
                first.send("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
                let ok = try first.readResponse()
                let second = try TestClient(port: port)
                let rejected = try second.readResponse()
                _ = second.waitForClose()
                return (ok.status, rejected.status)
            }
            #expect(first == 200)
            #expect(second == 503)
            #expect(try metrics.expectCounter("http_server_connections_rejected_total").totalValue == 1)
            // The 503 is a static answer at accept: not a response of a served connection, not an open one.
            #expect(try responses(metrics, "5xx") == 0)
            #expect(try metrics.expectMeter("http_server_connections").values.max() == 1)
        }
    }
}
