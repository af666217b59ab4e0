import Foundation
import Testing
import Upstream

/// Two replicas (the real binary, twice) on one PostgreSQL journal: a session lives where it was last asked for. The
/// replica that gets a request for a session it does not hold activates it from the shared journal and takes it over;
/// the copy on the other replica is fenced (its next write is refused, nothing of it kept), dropped (its stream ends)
/// and, when asked again, takes the session back with everything the other wrote. A session created with
/// `POST /v1/sessions` on one replica is activated by the other at its first request there (creation anywhere), and a
/// stream resuming on the new owner keeps its cursor (same epoch). A stream on the replica that lost its session ends
/// with `event: moved` (issue 33), also when nothing but the ownership watch tells that replica.
@Suite(.serialized, .timeLimit(.minutes(2)))
struct SessionMoveTests {
    private static let increment = #"{"type":"increment"}"#
    private static let moved = #"{"reason":"moved"}"#
    /// The first two tests show a stale copy at work: no ownership watch drops it before the request that meets it.
    private static let noWatch = ["--journal-ownership-watch-ms", "0"]

    /// The data of the events `stream` shows until it ends (at most 20), and how it ended.
    private static func eventsUntilTheEnd(of stream: SSEReader) async -> (shown: [String], ending: String?) {
        var shown: [String] = []
        var ending: String?
        for _ in 0..<20 where ending == nil {
            do {
                shown.append(try await stream.nextEvent(timeout: .seconds(10)).data)
            } catch {
                ending = "\(error)"
            }
        }
        return (shown, ending)
    }

    private func post(_ api: SessionAPIClient, _ id: String, key: String) async throws -> UpstreamResponse {
        try await api.postIncrement(id, key: key)
    }

    @Test func aSessionMovesToTheReplicaAskedAndTheOldCopyIsFencedAndDropped() async throws {
        let place = try ServiceJournal.postgres.place()
        let first = try await StreamTestServer.start(place.flags + Self.noWatch)
        let second = try await StreamTestServer.start(place.flags + Self.noWatch)
        let id = try await first.api.create()
        for _ in 1...3 { try await first.api.post(id, Self.increment) }
        let stream = try first.reader("/v1/sessions/\(id)/stream")
        let seen = try await stream.nextEvent()
        #expect(seen.type == "snapshot")
        let before = try await first.api.send("GET", "/v1/sessions/\(id)")

        // The second replica never saw the session: its first request activates it from the shared journal, at the
        // same revision and cursor epoch.
        let moved = try await second.api.send("GET", "/v1/sessions/\(id)")
        #expect(moved.status == 200)
        #expect(moved.bodyText == before.bodyText)
        #expect(moved.headers["etag"] == before.headers["etag"])

        // The first replica's copy is superseded: its write is refused with a 503 that says to retry, and nothing of
        // it is kept.
        let refused = try await post(first.api, id, key: "k1")
        #expect(refused.status == 503, "\(refused.bodyText)")
        #expect(refused.bodyText.contains("another replica"))
        // Its copy is dropped: the stream it served ends with `event: moved` (the client reconnects wherever the
        // balancer sends it), and never showed the refused event's state.
        let (shown, ending) = await Self.eventsUntilTheEnd(of: stream)
        #expect(shown == [Self.moved], "the superseded copy's stream showed \(shown)")
        #expect(ending?.contains("the stream closed") == true, "\(ending ?? "no end")")
        await stream.disconnect()

        // The stream reconnects to the new owner with its Last-Event-ID: the cursor's epoch is the same history's,
        // so nothing is resent (not a snapshot of a new history), and the next state comes as usual.
        let resumed = try second.reader("/v1/sessions/\(id)/stream", headers: ["Last-Event-ID: \(seen.id)"])
        #expect(try await resumed.head().status == 200)
        _ = try await resumed.next()  // the prelude: a comment and the retry
        _ = try await resumed.next()

        // The retry, where the session lives now, is applied once.
        let applied = try await post(second.api, id, key: "k1")
        #expect(applied.status == 200)
        #expect(jsonObject(applied.bodyText)["rev"] as? Int == 4)
        #expect(jsonObject(try await resumed.nextEvent().data)["rev"] as? Int == 4)
        await resumed.disconnect()
        #expect(try await post(second.api, id, key: "k1").bodyText == applied.bodyText)

        // Asked again, the first replica takes it back with the second's history, and the second is fenced in turn.
        let back = try await first.api.send("GET", "/v1/sessions/\(id)")
        #expect(jsonObject(back.bodyText)["rev"] as? Int == 4)
        #expect(try await first.api.post(id, Self.increment)["rev"] as? Int == 5)
        #expect(try await post(second.api, id, key: "k2").status == 503)
        // A client retrying at once on the same replica is not refused again by the same copy: the request drops it
        // and takes the session back from the journal, with the first replica's event in it.
        let retried = try await post(second.api, id, key: "k2")
        #expect(retried.status == 200, "\(retried.bodyText)")
        #expect(jsonObject(retried.bodyText)["rev"] as? Int == 6)
        let again = try await first.api.send("GET", "/v1/sessions/\(id)")
        #expect(jsonObject(again.bodyText)["rev"] as? Int == 6, "\(again.status) \(again.bodyText)")
        await first.stop()
        await second.stop()
    }

    /// A replica that wakes after another took its session over (a SIGSTOP, a stall) still holds its copy, whose
    /// timer may fire before anything tells it: that step is refused by the journal, and the copy's open stream
    /// never shows it (a stream shows only journaled states with a shared journal); the stream ends, and the state
    /// where the session lives now is the one the first replica had journaled. The clocks are manual, so the stale
    /// copy's timer fires exactly when the test advances the first replica's clock.
    @Test func aStaleCopysTimerStepNeverReachesItsStream() async throws {
        let place = try ServiceJournal.postgres.place()
        let clock = ["--clock", "manual", "--clock-start-ms", "1700000000000"]
        let first = try await StreamTestServer.start(place.flags + clock + Self.noWatch)
        let second = try await StreamTestServer.start(place.flags + clock + Self.noWatch)
        let id = try await first.api.create("traffic-light")
        try await first.api.post(id, #"{"type":"start"}"#)
        try await first.api.advance(milliseconds: 0)
        let stream = try first.reader("/v1/sessions/\(id)/stream")
        let seen = try await stream.nextEvent()
        #expect(jsonObject(seen.data)["state"].flatMap { $0 as? [String: Any] }?["phase"] as? String == "red")

        #expect(try await second.api.send("GET", "/v1/sessions/\(id)").status == 200)
        // The first replica's red light ends on its clock: its stale copy reduces the timer's event, which the
        // journal refuses.
        try await first.api.advance(milliseconds: 4000)
        let (shown, ending) = await Self.eventsUntilTheEnd(of: stream)
        #expect(shown == [Self.moved], "the stale copy's stream showed \(shown)")
        #expect(ending?.contains("the stream closed") == true, "\(ending ?? "no end")")
        await stream.disconnect()
        let now = try await second.api.send("GET", "/v1/sessions/\(id)")
        #expect(now.headers["etag"] == "\"\(seen.id)\"", "\(now.bodyText)")
        #expect(try await second.api.state(id)["phase"] as? String == "red")
        await first.stop()
        await second.stop()
    }

    /// The issue 33 case: the balancer sends the session's requests to the other replica, so the one that lost it gets
    /// none. Its ownership watch finds that another replica took the session and ends its stream with `event: moved`;
    /// the stream resumes on the new owner by its cursor. A stream of a session that stays put stays open.
    @Test func aStreamOfASessionTakenElsewhereEndsWithMovedWithoutARequestHere() async throws {
        let place = try ServiceJournal.postgres.place()
        let first = try await StreamTestServer.start(place.flags)
        let second = try await StreamTestServer.start(place.flags)
        let leaving = try await first.api.create()
        let staying = try await first.api.create()
        for _ in 1...2 { try await first.api.post(leaving, Self.increment) }
        let stream = try first.reader("/v1/sessions/\(leaving)/stream")
        let seen = try await stream.nextEvent()
        #expect(seen.type == "snapshot")
        let kept = try first.reader("/v1/sessions/\(staying)/stream")
        #expect(try await kept.nextEvent().type == "snapshot")

        // The other replica takes the session and goes on with it; the first hears nothing of it from a request.
        #expect(try await second.api.send("GET", "/v1/sessions/\(leaving)").status == 200)
        #expect(try await second.api.post(leaving, Self.increment)["rev"] as? Int == 3)
        let (shown, ending) = await Self.eventsUntilTheEnd(of: stream)
        #expect(shown == [Self.moved], "the stream of the session that moved showed \(shown)")
        #expect(ending?.contains("the stream closed") == true, "\(ending ?? "no end")")
        await stream.disconnect()
        #expect(try await first.api.metric(#"feedbackhost_stream_closes_total{reason="moved"}"#, reaches: 1))

        // Resumed where the session lives now, by its cursor: the state after it.
        let resumed = try second.reader("/v1/sessions/\(leaving)/stream", headers: ["Last-Event-ID: \(seen.id)"])
        let next = try await resumed.nextEvent()
        #expect(jsonObject(next.data)["rev"] as? Int == 3, "\(next)")
        await resumed.disconnect()

        // The session that stayed put kept its stream through the same rounds of the watch.
        #expect(try await first.api.post(staying, Self.increment)["rev"] as? Int == 1)
        let update = try await kept.nextEvent()
        #expect(update.type == "snapshot" && jsonObject(update.data)["rev"] as? Int == 1, "\(update)")
        await kept.disconnect()
        await first.stop()
        await second.stop()
    }
}
