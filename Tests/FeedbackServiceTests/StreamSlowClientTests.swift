import FeedbackService
import Foundation
import Testing

/// Slow subscribers on the in-process service: they get the latest state when they catch up while the others
/// keep receiving, and one that makes no write progress is closed.
///
/// Two minutes a test: the first posts 40 states of 200 KB (enough to fill the slow client's socket buffers on
/// loopback), which this debug build took 38-55 s to do on a busy two-core machine.
@Suite(.serialized, .timeLimit(.minutes(2)))
struct StreamSlowClientTests {
    /// Waits (bounded) until `metric` reaches `value`.
    private func wait(for metric: String, atLeast value: Double, on server: InProcessServer) async throws -> Bool {
        for _ in 0..<200 {
            if try await server.metric(metric) >= value { return true }
            try await Task.sleep(for: .milliseconds(50))
        }
        return false
    }

    @Test func clientThatStopsReadingGetsTheLatestStateWhileOthersKeepReceiving() async throws {
        // The slow client makes no write progress while the 40 states are posted, which can take this debug build
        // past the default stall timeout (30 s) on a busy machine (see the suite's comment), and that would close its
        // stream. Stalls are the next test's; here the timeout is out of the way.
        let server = try InProcessServer.start(["--stream-highwater-bytes", "16384", "--stream-stall-ms", "600000"])
        let api = server.api
        let id = try await api.create("notes")
        let slow = try server.reader("/v1/sessions/\(id)/stream", receiveBuffer: 4096)
        let fast = try server.reader("/v1/sessions/\(id)/stream")
        #expect(try await slow.nextEvent().type == "snapshot")
        #expect(try await fast.nextEvent().type == "snapshot")
        let posts = 40
        // The fast client reads while the states are posted; the slow one reads nothing meanwhile.
        async let fastRevisions: [Int] = {
            var revisions: [Int] = []
            while revisions.last != posts {
                revisions.append(jsonObject(try await fast.nextEvent().data)["rev"] as? Int ?? -1)
            }
            return revisions
        }()
        for index in 0..<posts {
            try await api.post(id, #"{"type":"pad","bytes":\#(200_000 + index)}"#)
        }
        let seenByFast = try await fastRevisions
        #expect(seenByFast.last == posts)
        #expect(seenByFast == seenByFast.sorted())
        #expect(try await server.metric("feedbackhost_stream_conflations_total") > 0)
        // Now the slow client reads: revisions only go up, some were skipped, and it ends at the latest.
        var seenBySlow: [Int] = []
        while seenBySlow.last != posts {
            let event = try await slow.nextEvent()
            #expect(event.type == "snapshot")
            seenBySlow.append(jsonObject(event.data)["rev"] as? Int ?? -1)
        }
        #expect(seenBySlow == seenBySlow.sorted())
        #expect(Set(seenBySlow).count == seenBySlow.count)
        #expect(seenBySlow.count < posts)
        await server.stop()
    }

    @Test func subscriberWithoutWriteProgressIsClosedAfterTheStallTimeout() async throws {
        let server = try InProcessServer.start(["--stream-highwater-bytes", "16384", "--stream-stall-ms", "300"])
        let id = try await server.api.create("notes")
        let stalled = try server.reader("/v1/sessions/\(id)/stream", receiveBuffer: 4096)
        let reading = try server.reader("/v1/sessions/\(id)/stream")
        #expect(try await stalled.nextEvent().type == "snapshot")
        #expect(try await reading.nextEvent().type == "snapshot")
        for index in 0..<20 {
            try await server.api.post(id, #"{"type":"pad","bytes":\#(200_000 + index)}"#)
            #expect(jsonObject(try await reading.nextEvent().data)["rev"] as? Int == index + 1)
        }
        #expect(
            try await wait(for: #"feedbackhost_stream_closes_total{reason="stalled"}"#, atLeast: 1, on: server)
        )
        #expect(try await server.metric("feedbackhost_streams") == 1)
        // The stalled client finds its stream cut short when it reads again.
        var item = try await stalled.next()
        while item != .closed { item = try await stalled.next() }
        // The other stream still works.
        try await server.api.post(id, #"{"type":"set","text":"still here"}"#)
        #expect(jsonObject(try await reading.nextEvent().data)["rev"] as? Int == 21)
        await server.stop()
    }
}
