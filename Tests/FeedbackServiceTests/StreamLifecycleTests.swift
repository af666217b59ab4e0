import FeedbackService
import Foundation
import SystemKit
import Systems
import Testing
import Upstream

/// How streams of the real binary begin and end: heartbeats, session expiry, limits, shutdown, and `curl -N` as
/// a client.
@Suite(.serialized, .timeLimit(.minutes(1)))
struct StreamLifecycleTests {
    @Test func idleStreamGetsCommentHeartbeatsAtTheConfiguredInterval() async throws {
        let running = try await StreamTestServer.start(["--stream-heartbeat-ms", "100"])
        let id = try await running.api.create()
        let reader = try running.reader("/v1/sessions/\(id)/stream")
        _ = try await reader.nextEvent()
        for _ in 0..<3 {
            #expect(try await reader.next(timeout: .seconds(10)) == .comment(""))
        }
        let metrics = try await running.api.send("GET", "/metrics").bodyText
        #expect(!metrics.contains("feedbackhost_stream_heartbeats_total 0\n"))
        await running.stop()
    }

    /// Reads a refused stream: 200, a comment, a retry, then the end.
    private func expectShed(_ reader: SSEReader) async throws {
        #expect(try await reader.head().status == 200)
        guard case .comment = try await reader.next() else {
            Issue.record("no comment first")
            return
        }
        guard case .retry(let retry) = try await reader.next() else {
            Issue.record("no retry")
            return
        }
        #expect(retry > 0)
        #expect(try await reader.next() == .closed)
    }

    @Test func streamsPastTheLimitsGet200RetryAndClose() async throws {
        let running = try await StreamTestServer.start(["--stream-max-per-session", "1", "--stream-max-total", "2"])
        let first = try await running.api.create()
        let second = try await running.api.create()
        let open = try running.reader("/v1/sessions/\(first)/stream")
        #expect(try await open.nextEvent().type == "snapshot")
        try await expectShed(try running.reader("/v1/sessions/\(first)/stream"))
        let other = try running.reader("/v1/sessions/\(second)/stream")
        #expect(try await other.nextEvent().type == "snapshot")
        let third = try await running.api.create()
        try await expectShed(try running.reader("/v1/sessions/\(third)/stream"))
        let metrics = try await running.api.send("GET", "/metrics").bodyText
        #expect(metrics.contains(#"feedbackhost_stream_closes_total{reason="session_limit"} 1"#))
        #expect(metrics.contains(#"feedbackhost_stream_closes_total{reason="total_limit"} 1"#))
        #expect(metrics.contains("feedbackhost_streams 2"))
        // The open streams still work.
        try await running.api.post(first, #"{"type":"increment"}"#)
        #expect(jsonObject(try await open.nextEvent().data)["rev"] as? Int == 1)
        // A client that goes away frees its place.
        await open.disconnect()
        var freed = false
        for _ in 0..<200 where !freed {
            freed = try await running.api.send("GET", "/metrics").bodyText.contains(
                #"feedbackhost_stream_closes_total{reason="client"} 1"#
            )
            if !freed { try await Task.sleep(for: .milliseconds(25)) }
        }
        #expect(freed)
        let again = try running.reader("/v1/sessions/\(first)/stream")
        #expect(try await again.nextEvent().type == "snapshot")
        await running.stop()
    }

    @Test func curlReadsTheStreamUntilTheSessionIsDeleted() async throws {
        let running = try await StreamTestServer.start()
        let id = try await running.api.create()
        let url = "\(running.api.base)/v1/sessions/\(id)/stream"
        let process = Process()
        let output = Pipe()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/curl")
        process.arguments = ["-sN", "--max-time", "20", url]
        process.standardOutput = output
        try process.run()
        // curl has the stream once the first snapshot is in the metrics' count of open streams.
        var open = false
        for _ in 0..<200 where !open {
            open = try await running.api.send("GET", "/metrics").bodyText.contains("feedbackhost_streams 1")
            if !open { try await Task.sleep(for: .milliseconds(25)) }
        }
        #expect(open)
        try await running.api.post(id, #"{"type":"add","amount":41}"#)
        try await running.api.post(id, #"{"type":"increment"}"#)
        _ = try await running.api.send("DELETE", "/v1/sessions/\(id)")
        let handle = output.fileHandleForReading
        let text = try await offPool { () -> String in
            let data = handle.readDataToEndOfFile()
            process.waitUntilExit()
            return String(decoding: data, as: UTF8.self)
        }
        #expect(process.terminationStatus == 0)
        #expect(text.hasPrefix(": "))
        #expect(text.contains("retry: "))
        // Each state once, in order, the last one before the end.
        let revisions = text.split(separator: "\n").filter { $0.hasPrefix("data: {\"rev\"") }.map {
            jsonObject(String($0.dropFirst(6)))["rev"] as? Int ?? -1
        }
        #expect(revisions == Array((revisions.first ?? 0)...2))
        #expect(
            text.hasSuffix(
                "data: {\"rev\":2,\"state\":{\"count\":42},\"schema\":\"\(CounterSystem().schemaHash)\"}\n\nevent: ended\n"
                    + "data: {\"reason\":\"deleted\"}\n\n"
            )
        )
        await running.stop()
    }

    @Test func shutdownClosesOpenStreamsAndRefusesNewOnes() async throws {
        let server = try InProcessServer.start(["--stream-drain-ms", "300"])
        let id = try await server.api.create("counter")
        let readers = try (0..<5).map { _ in try server.reader("/v1/sessions/\(id)/stream") }
        for reader in readers { #expect(try await reader.nextEvent().type == "snapshot") }
        server.application.service.beginDraining()
        let refused = try server.reader("/v1/sessions/\(id)/stream")
        #expect(try await refused.head().status == 200)
        var items: [SSEItem] = []
        while items.last != .closed { items.append(try await refused.next()) }
        #expect(items.count == 3)
        async let shutdown: Void = server.stop()
        for reader in readers {
            var item = try await reader.next()
            while case .comment = item { item = try await reader.next() }
            #expect(item == .closed)
        }
        await shutdown
    }
}
