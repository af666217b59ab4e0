import Foundation
import Testing
import Upstream

/// `GET /v1/sessions/{id}/stream` of the real binary over loopback, read by a raw-socket SSE client.
@Suite(.serialized, .timeLimit(.minutes(1)))
struct StreamTests {
    @Test func streamStartsWithACommentAndRetryThenSnapshotThenOneEventPerState() async throws {
        let running = try await StreamTestServer.start()
        let id = try await running.api.create()
        let reader = try running.reader("/v1/sessions/\(id)/stream", headers: ["Accept-Encoding: gzip"])
        let head = try await reader.head()
        #expect(head.status == 200)
        #expect(head.headers["content-encoding"] == nil)
        #expect(head.headers["content-type"] == "text/event-stream")
        #expect(head.headers["cache-control"] == "no-store")
        #expect(head.headers["x-accel-buffering"] == "no")
        guard case .comment = try await reader.next() else {
            Issue.record("the stream does not start with a comment")
            return await running.stop()
        }
        guard case .retry(let retry) = try await reader.next() else {
            Issue.record("the comment is not followed by retry:")
            return await running.stop()
        }
        #expect(retry > 0)
        let first = try await reader.nextEvent()
        #expect(first.type == "snapshot")
        #expect(jsonObject(first.data)["rev"] as? Int == 0)
        #expect((jsonObject(first.data)["state"] as? [String: Any])?["count"] as? Int == 0)
        var ids = [first.id]
        for count in 1...5 {
            try await running.api.post(id, #"{"type":"increment"}"#)
            let event = try await reader.nextEvent()
            #expect(event.type == "snapshot")
            #expect(jsonObject(event.data)["rev"] as? Int == count)
            #expect((jsonObject(event.data)["state"] as? [String: Any])?["count"] as? Int == count)
            ids.append(event.id)
        }
        let revisions = ids.map { Int($0.split(separator: "-").last ?? "") ?? -1 }
        #expect(revisions == Array(0...5))
        #expect(Set(ids.map { $0.split(separator: "-").first ?? "" }).count == 1)
        await running.stop()
    }

    @Test func deletingTheSessionEndsItsStreamsWithTheReason() async throws {
        let running = try await StreamTestServer.start()
        let id = try await running.api.create()
        let readers = try (0..<3).map { _ in try running.reader("/v1/sessions/\(id)/stream") }
        for reader in readers { _ = try await reader.nextEvent() }
        #expect(try await running.api.send("DELETE", "/v1/sessions/\(id)").status == 204)
        for reader in readers {
            let ended = try await reader.nextEvent()
            #expect(ended.type == "ended")
            #expect(jsonObject(ended.data)["reason"] as? String == "deleted")
            #expect(try await reader.next() == .closed)
        }
        await running.stop()
    }

    @Test func unknownSessionIs404() async throws {
        let running = try await StreamTestServer.start()
        let response = try await running.api.send("GET", "/v1/sessions/AAAAAAAAAAAAAAAAAAAAAA/stream")
        #expect(response.status == 404)
        #expect(response.headers["Content-Type"] == "application/problem+json")
        await running.stop()
    }
}
