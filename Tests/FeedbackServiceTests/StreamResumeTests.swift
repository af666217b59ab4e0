import Foundation
import Testing
import Upstream

/// Resuming a stream by `Last-Event-ID` or `?lastEventId=` on the real binary: nothing resent when current, one
/// patch or snapshot when behind, a snapshot for a cursor it cannot place; never an error status.
@Suite(.serialized, .timeLimit(.minutes(1)))
struct StreamResumeTests {
    /// A session at revision 3 and the ids its stream gave for revisions 0 to 3.
    private func sessionAtRevision3(_ running: StreamTestServer) async throws -> (id: String, ids: [String]) {
        let id = try await running.api.create()
        let reader = try running.reader("/v1/sessions/\(id)/stream")
        var ids = [try await reader.nextEvent().id]
        for _ in 1...3 {
            try await running.api.post(id, #"{"type":"increment"}"#)
            ids.append(try await reader.nextEvent().id)
        }
        return (id, ids)
    }

    /// The first event after connecting with `headers` to `query`; `post` is sent first when given, so that a
    /// stream that (rightly) sends nothing on connect still has something to show.
    private func firstEvent(
        _ running: StreamTestServer,
        _ id: String,
        query: String = "",
        headers: [String] = [],
        postFirst: Bool = false
    ) async throws -> (type: String, data: [String: Any], id: String) {
        let reader = try running.reader("/v1/sessions/\(id)/stream\(query)", headers: headers)
        let head = try await reader.head()
        #expect(head.status == 200)
        // The prelude (comment, retry) arrives before anything the hub sends, so "nothing resent" is observable.
        _ = try await reader.next()
        _ = try await reader.next()
        if postFirst { try await running.api.post(id, #"{"type":"increment"}"#) }
        let event = try await reader.nextEvent()
        return (event.type, jsonObject(event.data), event.id)
    }

    @Test func currentCursorGetsNothingResent() async throws {
        let running = try await StreamTestServer.start()
        let (id, ids) = try await sessionAtRevision3(running)
        let next = try await firstEvent(running, id, headers: ["Last-Event-ID: \(ids[3])"], postFirst: true)
        #expect(next.type == "snapshot")
        #expect(next.data["rev"] as? Int == 4)
        let patch = try await firstEvent(
            running,
            id,
            query: "?mode=patch",
            headers: ["Last-Event-ID: \(ids[3].replacingOccurrences(of: "-3", with: "-4"))"],
            postFirst: true
        )
        #expect(patch.type == "patch")
        #expect(patch.data["base"] as? Int == 4)
        #expect(patch.data["rev"] as? Int == 5)
        await running.stop()
    }

    @Test func olderCursorGetsOnePatchOrASnapshot() async throws {
        let running = try await StreamTestServer.start()
        let (id, ids) = try await sessionAtRevision3(running)
        let patch = try await firstEvent(running, id, query: "?mode=patch", headers: ["Last-Event-ID: \(ids[1])"])
        #expect(patch.type == "patch")
        #expect(patch.data["base"] as? Int == 1)
        #expect(patch.data["rev"] as? Int == 3)
        #expect(patch.id == ids[3])
        let ops = patch.data["ops"] as? [[String: Any]] ?? []
        #expect(ops.count == 1)
        #expect(ops.first?["path"] as? String == "/count")
        #expect(ops.first?["value"] as? Int == 3)
        let snapshot = try await firstEvent(running, id, headers: ["Last-Event-ID: \(ids[1])"])
        #expect(snapshot.type == "snapshot")
        #expect(snapshot.data["rev"] as? Int == 3)
        await running.stop()
    }

    @Test func garbageForeignAndFutureCursorsGetASnapshot() async throws {
        let running = try await StreamTestServer.start()
        let (id, ids) = try await sessionAtRevision3(running)
        let epoch = ids[3].split(separator: "-")[0]
        let foreignEpoch = (UInt64(epoch) ?? 0) &+ 1
        for cursor in ["garbage", "", "-1", "1-2-3", "\(foreignEpoch)-2", "\(epoch)-99", "\(epoch)-01"] {
            let event = try await firstEvent(running, id, query: "?mode=patch", headers: ["Last-Event-ID: \(cursor)"])
            #expect(event.type == "snapshot", "cursor \(cursor)")
            #expect(event.data["rev"] as? Int == 3, "cursor \(cursor)")
        }
        let unknown = try await running.api.send("GET", "/metrics").bodyText
        #expect(unknown.contains(#"feedbackhost_stream_resumes_total{outcome="unknown"} 7"#))
        await running.stop()
    }

    @Test func lastEventIDHeaderWinsOverTheQuery() async throws {
        let running = try await StreamTestServer.start()
        let (id, ids) = try await sessionAtRevision3(running)
        let fromQuery = try await firstEvent(running, id, query: "?mode=patch&lastEventId=\(ids[2])")
        #expect(fromQuery.type == "patch")
        #expect(fromQuery.data["base"] as? Int == 2)
        let both = try await firstEvent(
            running,
            id,
            query: "?mode=patch&lastEventId=\(ids[2])",
            headers: ["Last-Event-ID: \(ids[1])"]
        )
        #expect(both.type == "patch")
        #expect(both.data["base"] as? Int == 1)
        let garbageHeader = try await firstEvent(
            running,
            id,
            query: "?mode=patch&lastEventId=\(ids[2])",
            headers: ["Last-Event-ID: nonsense"]
        )
        #expect(garbageHeader.type == "snapshot")
        await running.stop()
    }
}
