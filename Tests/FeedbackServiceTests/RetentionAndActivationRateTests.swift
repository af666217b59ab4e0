import ConformanceChecks
import CurlClient
import Foundation
import Testing
import Upstream

/// `session.retention` deletes passive sessions nobody used for that long; `session.activation.rate` spaces the
/// upstream fetches that activated sessions restart. Against the real binary.
@Suite(.serialized, .timeLimit(.minutes(2)))
struct RetentionAndActivationRateTests {
    @Test func aPassiveSessionUnusedPastTheRetentionIsDeletedWhileWatchedAndTimedOnesStay() async throws {
        let running = try await StreamTestServer.start(["--session-idle-ms", "100", "--session-retention", "2s"])
        let api = running.api
        let forgotten = try await api.create()
        try await api.post(forgotten, #"{"type":"increment"}"#)
        let watched = try await api.create()
        let light = try await api.create("traffic-light")
        try await api.post(light, #"{"type":"start"}"#)  // running, it always has its next phase's deadline pending
        let stream = try running.reader("/v1/sessions/\(watched)/stream")
        _ = try await stream.nextEvent()

        #expect(try await api.metric(#"feedbackhost_sessions_ended_total{reason="retention"}"#, reaches: 1))
        #expect(try await api.send("GET", "/v1/sessions/\(forgotten)").status == 404)
        #expect(try await api.send("GET", "/v1/sessions/\(watched)").status == 200)
        #expect(try await api.send("GET", "/v1/sessions/\(light)").status == 200)
        #expect(try await api.metric(#"feedbackhost_sessions_ended_total{reason="retention"}"#) == 1)
        await stream.disconnect()
        await running.stop()
    }

    /// Four paging sessions passivated in the middle of a fetch (the upstream never answers) are activated at
    /// once (each by a stream, which keeps it active) with `--session-activation-rate 1`: their restarted fetches
    /// reach the upstream one a second, the last no sooner than three seconds after the activations, while every
    /// stream opens at once.
    @Test func activationsRestartTheirUpstreamFetchesAtTheConfiguredRate() async throws {
        let upstream = try StallingUpstream.start()
        do {
            try await restartFetches(through: upstream)
        } catch {
            await upstream.stop()
            throw error
        }
        await upstream.stop()
    }

    private func restartFetches(through upstream: StallingUpstream) async throws {
        let running = try await StreamTestServer.start([
            "--session-idle-ms", "300", "--session-activation-rate", "1", "--upstream", upstream.url("/search"),
            "--paging-timeout-ms", "120000", "--paging-max-attempts", "1",
        ])
        let api = running.api
        var ids: [String] = []
        for _ in 0..<4 {
            let id = try await api.create("paging")
            try await api.post(id, #"{"type":"search","query":"q"}"#)
            ids.append(id)
        }
        #expect(try await upstream.arrivals(reach: 4) != nil)
        #expect(try await api.metric("feedbackhost_sessions_passive", reaches: 4))

        // Each stream activates its session and keeps it active (not idle) while its fetch waits its turn.
        let before = try await upstream.now()
        var streams: [SSEReader] = []
        for id in ids {
            let stream = try running.reader("/v1/sessions/\(id)/stream")
            _ = try await stream.nextEvent()
            streams.append(stream)
        }
        let arrivals = try #require(try await upstream.arrivals(reach: 8))
        let restarted = arrivals.dropFirst(4).sorted()
        #expect(restarted.count == 4)
        #expect((restarted.last ?? 0) - before >= 2.9)
        #expect(try await api.metric("feedbackhost_activation_fetch_wait_seconds_count") >= 4)
        for stream in streams { await stream.disconnect() }
        await running.stop()
    }
}

/// An upstream that takes requests and never answers them (Python, a child process on 127.0.0.1), and tells on
/// `/arrivals` when each came, on the monotonic clock.
private final class StallingUpstream: @unchecked Sendable {
    private static let script = """
        import http.server, json, socketserver, sys, threading, time
        arrivals, lock = [], threading.Lock()
        class Handler(http.server.BaseHTTPRequestHandler):
            def log_message(self, *args): pass
            def do_GET(self):
                if self.path.startswith("/arrivals"):
                    with lock: body = json.dumps({"now": time.monotonic(), "arrivals": list(arrivals)}).encode()
                    self.send_response(200)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(body)))
                    self.end_headers()
                    self.wfile.write(body)
                    return
                with lock: arrivals.append(time.monotonic())
                time.sleep(300)
        class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
            daemon_threads = True
        server = Server(("127.0.0.1", 0), Handler)
        print(server.server_address[1], flush=True)
        threading.Thread(target=lambda: (sys.stdin.read(), server.shutdown()), daemon=True).start()
        server.serve_forever()
        """
    private let process = Process()
    private let lifeline = Pipe()
    private let client = SessionAPIClient(port: 0)
    let port: Int

    private init() throws {
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", "-c", Self.script]
        let output = Pipe()
        process.standardOutput = output
        process.standardInput = lifeline
        try process.run()
        var line: [UInt8] = []
        while line.last != UInt8(ascii: "\n") {
            guard let byte = output.fileHandleForReading.readData(ofLength: 1).first else { break }
            line.append(byte)
        }
        guard let port = Int(String(decoding: line, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines))
        else {
            process.terminate()
            throw SSEReader.Timeout(what: "the stalling upstream's port")
        }
        self.port = port
    }

    static func start() throws -> StallingUpstream { try StallingUpstream() }

    func url(_ path: String) -> String { "http://127.0.0.1:\(port)\(path)" }

    private func state() async throws -> (now: Double, arrivals: [Double]) {
        let response = try await client.client.fetch(UpstreamRequest(url: url("/arrivals")))
        let object = jsonObject(response.bodyText)
        return (object["now"] as? Double ?? 0, object["arrivals"] as? [Double] ?? [])
    }

    /// The upstream's monotonic clock now, in seconds.
    func now() async throws -> Double { try await state().now }

    /// The arrival times once there are `count`, polled every 20 ms for at most 20 s; nil if they never are.
    func arrivals(reach count: Int) async throws -> [Double]? {
        for _ in 0..<1000 {
            let arrivals = try await state().arrivals
            if arrivals.count >= count { return arrivals }
            try await Task.sleep(for: .milliseconds(20))
        }
        return nil
    }

    func stop() async {
        try? lifeline.fileHandleForWriting.close()
        process.terminate()
        process.waitUntilExit()
        await client.shutdown()
    }
}
