import Foundation
import Testing
import Upstream

/// With a journal, a session idle for `session.idle.ms` leaves memory (passive) and the next request for it brings
/// it back (active) as it was: revision, cursor epoch, idempotency answers. Against the real binary.
@Suite(.serialized, .timeLimit(.minutes(2)))
struct PassivationTests {
    private static let passivations = #"feedbackhost_session_passivations_total{reason="idle"}"#
    private static let activations = #"feedbackhost_session_activations_total{reason="request"}"#

    /// Polls the sessions in memory until they are `count` (idle passivation moves them), at most 800 polls 20 ms
    /// apart; false if they never are.
    private static func inMemory(_ api: SessionAPIClient, reaches count: Double) async throws -> Bool {
        for _ in 0..<800 {
            if try await api.metric("feedbackhost_sessions") == count { return true }
            try await Task.sleep(for: .milliseconds(20))
        }
        return false
    }

    /// A POST of one increment with an `Idempotency-Key`.
    private func post(_ api: SessionAPIClient, _ id: String, key: String) async throws -> UpstreamResponse {
        try await api.postIncrement(id, key: key)
    }

    @Test(arguments: ServiceJournal.allCases)
    func aPassivatedSessionComesBackAsItWasWithItsCursorAndIdempotencyAnswers(_ journal: ServiceJournal) async throws {
        let place = try journal.place()
        defer { place.remove() }
        let running = try await StreamTestServer.start(["--session-idle-ms", "100"] + place.flags)
        let api = running.api
        let id = try await api.create()
        for _ in 1...2 { try await api.post(id, #"{"type":"increment"}"#) }
        let keyed = try await post(api, id, key: "third")
        #expect(keyed.status == 200)
        let before = try await api.send("GET", "/v1/sessions/\(id)")
        // Idle, the session leaves memory. A client slower than the idle time between two requests (the first test of
        // a cold process took 165 ms) sees it passivated and woken on the way already: the counts start here.
        #expect(try await Self.inMemory(api, reaches: 0))
        #expect(try await api.metric(Self.passivations) >= 1)
        let activations = try await api.metric(Self.activations)

        let after = try await api.send("GET", "/v1/sessions/\(id)")
        #expect(after.status == 200)
        #expect(after.bodyText == before.bodyText)
        #expect(after.headers["etag"] == before.headers["etag"])
        #expect(try await api.metric(Self.activations) == activations + 1)
        // The keyed POST answered before the passivation is answered again, not applied again.
        let retried = try await post(api, id, key: "third")
        #expect(retried.status == 200)
        #expect(retried.bodyText == keyed.bodyText)
        #expect(jsonObject(try await api.send("GET", "/v1/sessions/\(id)").bodyText)["rev"] as? Int == 3)
        #expect(try await api.post(id, #"{"type":"increment"}"#)["rev"] as? Int == 4)
        await running.stop()
    }

    /// Sessions passivated every few posts while their posters, readers and a stream keep using them: every post
    /// is applied exactly once (a post caught by a passivation gets 503 and is retried with its key), the revisions
    /// each client sees never go backwards, and after a restart every session holds exactly its acknowledged posts.
    @Test(arguments: ServiceJournal.allCases)
    func passivationRacingWithPostsReadsAndStreamsLosesNothing(_ journal: ServiceJournal) async throws {
        let place = try journal.place()
        defer { place.remove() }
        let flags = ["--session-idle-ms", "30"] + place.flags
        let running = try await StreamTestServer.start(flags)
        let api = running.api
        var ids: [String] = []
        for _ in 0..<6 { ids.append(try await api.create()) }
        let stream = try running.reader("/v1/sessions/\(ids[0])/stream")
        #expect(try await stream.nextEvent().type == "snapshot")

        let acknowledged = try await withThrowingTaskGroup(of: (String, Int).self) { group in
            for (index, id) in ids.enumerated() {
                group.addTask {
                    var last = 0
                    for number in 1...25 {
                        var answer = try await post(api, id, key: "post-\(number)")
                        var retries = 0
                        while answer.status == 503 && retries < 20 {
                            retries += 1
                            answer = try await post(api, id, key: "post-\(number)")
                        }
                        #expect(answer.status == 200, "session \(index) post \(number): \(answer.bodyText)")
                        let rev = jsonObject(answer.bodyText)["rev"] as? Int ?? -1
                        #expect(rev == last + 1, "session \(index): rev \(rev) after \(last)")
                        last = rev
                        // Every fifth post waits past the idle time, so the session is passivated meanwhile.
                        try await Task.sleep(for: .milliseconds(number % 5 == 0 ? 90 : Int.random(in: 0...10)))
                    }
                    return (id, last)
                }
                group.addTask {
                    var seen = 0
                    for _ in 0..<30 {
                        let read = try await api.send("GET", "/v1/sessions/\(id)")
                        #expect(read.status == 200)
                        let rev = jsonObject(read.bodyText)["rev"] as? Int ?? -1
                        #expect(rev >= seen, "session \(index): a read saw rev \(rev) after \(seen)")
                        seen = rev
                        try await Task.sleep(for: .milliseconds(Int.random(in: 5...50)))
                    }
                    return (id, -1)
                }
            }
            var acknowledged: [String: Int] = [:]
            for try await (id, last) in group where last >= 0 { acknowledged[id] = last }
            return acknowledged
        }
        // The watched session stayed active and its stream saw its revisions in order.
        var streamed = 0
        while streamed < acknowledged[ids[0]] ?? 0 {
            let rev = jsonObject(try await stream.nextEvent().data)["rev"] as? Int ?? -1
            #expect(rev > streamed)
            streamed = rev
        }
        await stream.disconnect()
        // The race was run: the sessions went passive and came back, over and over (about 5 times each).
        let passivated = try await api.metric(Self.passivations)
        let activated = try await api.metric(Self.activations)
        #expect(passivated >= Double(ids.count) && activated >= Double(ids.count), "\(passivated), \(activated)")
        await running.stop()

        let restarted = try await StreamTestServer.start(place.flags)
        for id in ids {
            let state = jsonObject(try await restarted.api.send("GET", "/v1/sessions/\(id)").bodyText)
            #expect(state["rev"] as? Int == acknowledged[id])
            #expect((state["state"] as? [String: Any])?["count"] as? Int == acknowledged[id])
        }
        await restarted.stop()
    }

    /// `sessions.max.active` bounds the sessions in memory: past it, the least recently used one nobody watches leaves
    /// memory to make room (and comes back when asked for); only when every one is watched is a create refused.
    @Test func aFullServerMakesRoomByPassivatingTheLeastRecentlyUsedSession() async throws {
        let running = try await StreamTestServer.start(["--sessions-max-active", "2"])
        let api = running.api
        let capacity = #"feedbackhost_session_passivations_total{reason="capacity"}"#
        let first = try await api.create()
        try await api.post(first, #"{"type":"increment"}"#)
        let second = try await api.create()
        let third = try await api.create()  // the first leaves memory
        #expect(try await api.metric(capacity) == 1)
        #expect(try await api.metric("feedbackhost_sessions") == 2)
        let back = try await api.send("GET", "/v1/sessions/\(first)")  // the second leaves memory
        #expect(back.status == 200)
        #expect(jsonObject(back.bodyText)["rev"] as? Int == 1)
        #expect(try await api.metric(capacity) == 2)

        // Every session in memory watched: nothing can leave, so a create is refused.
        let watchers = try [first, third].map { try running.reader("/v1/sessions/\($0)/stream") }
        for watcher in watchers { #expect(try await watcher.nextEvent().type == "snapshot") }
        let refused = try await api.send("POST", "/v1/sessions", body: #"{"system":"counter"}"#)
        #expect(refused.status == 503)
        #expect(try await api.send("GET", "/v1/sessions/\(second)").status == 503)
        for watcher in watchers { await watcher.disconnect() }
        await running.stop()
    }
}
