import FeedbackJSON
import FeedbackService
import Foundation
import SessionJournal
import Systems
import Testing
import Upstream

/// Issue 32's inspection routes over a real socket, against both journals: history pages whose patches rebuild every
/// state, states at every revision, diffs, what retention no longer keeps, a tampered journal, the list of sessions
/// and its counts, which feedback made an effect's event, and redaction.
@Suite(.timeLimit(.minutes(4)))
struct InspectionTests {
    @Test(arguments: ServiceJournal.allCases)
    func aTenThousandEventHistoryReadInPagesRebuildsEveryState(_ journal: ServiceJournal) async throws {
        let place = try journal.place()
        defer { place.remove() }
        let server = try JournaledServer.start(
            place.flags + ["--history-retention", "forever"],
            systems: [HostedSystem(CounterSystem())]
        )
        let id = try await server.api.create()
        var posted: [JSONValue] = []
        for batch in 0..<100 {
            let events: [JSONValue] = (0..<100).map { index in
                let n = batch * 100 + index
                return n % 7 == 0
                    ? .object(["type": .string("add"), "amount": .int(Int64(n % 13) - 6)])
                    : .object(["type": .string(n % 5 == 0 ? "decrement" : "increment")])
            }
            let body = JSONValue.object(["events": .array(events)])
            let answer = try await server.api.send(
                "POST",
                "/v1/sessions/\(id)/events",
                body: String(decoding: body.serialized(), as: UTF8.self)
            )
            #expect(answer.status == 200, "\(answer.bodyText)")
            posted += events
        }
        var state = JSONValue.object(["count": .int(0)])
        var count: Int64 = 0
        var seen: [JSONValue] = []
        var after: UInt64 = 0
        while true {
            let page = try await Self.get(server, "/v1/sessions/\(id)/history?after=\(after)&limit=500")
            guard case .array(let entries)? = page["entries"] else {
                Issue.record("no entries: \(page)")
                return
            }
            #expect(page["keptFrom"] == .int(0))
            for entry in entries {
                let patch = try JSONPatch(json: try #require(entry["patch"]))
                state = try patch.apply(to: state)
                let event = try #require(entry["event"])
                seen.append(event)
                count += Self.counterStep(event)
                #expect(state == .object(["count": .int(count)]), "revision \(String(describing: entry["rev"]))")
                #expect(entry["origin"] == .string("client"))
                #expect(entry["feedback"] == .null)
                #expect(entry["rev"] == .int(Int64(seen.count)))
            }
            guard case .int(let next)? = page["next"] else { break }
            after = UInt64(next)
        }
        #expect(seen == posted)
        #expect(state == .object(["count": .int(count)]))
        await server.stop()
    }

    @Test(arguments: ServiceJournal.allCases)
    func statesAtEveryRevisionEqualAnIndependentReduction(_ journal: ServiceJournal) async throws {
        let place = try journal.place()
        defer { place.remove() }
        let server = try JournaledServer.start(
            place.flags + ["--history-retention", "forever"],
            systems: [HostedSystem(CounterSystem())]
        )
        let id = try await server.api.create()
        var counts: [Int] = [0]
        for n in 1...250 {
            let event = n % 4 == 0 ? #"{"type":"add","amount":\#(n)}"# : #"{"type":"decrement"}"#
            _ = try await server.api.post(id, event)
            counts.append(counts[n - 1] + (n % 4 == 0 ? n : -1))
        }
        for revision in 0...250 {
            let answer = try await Self.get(server, "/v1/sessions/\(id)/states/\(revision)")
            #expect(answer["state"] == .object(["count": .int(Int64(counts[revision]))]), "revision \(revision)")
            #expect(answer["rev"] == .int(Int64(revision)))
        }
        let diff = try await Self.get(server, "/v1/sessions/\(id)/diff?from=10&to=200")
        let patch = try JSONPatch(json: try #require(diff["patch"]))
        #expect(
            try patch.apply(to: .object(["count": .int(Int64(counts[10]))]))
                == .object(["count": .int(Int64(counts[200]))])
        )
        let beyond = try await server.api.send("GET", "/v1/sessions/\(id)/states/251")
        #expect(beyond.status == 404)
        #expect(beyond.bodyText.contains("revision-not-found"))
        let malformed = try await server.api.send("GET", "/v1/sessions/\(id)/states/ten")
        #expect(malformed.status == 400)
        #expect(malformed.headers["content-type"]?.hasPrefix("application/problem+json") == true)
        await server.stop()

        // A retention of 50 events: revisions before the kept snapshot it starts at are gone (410).
        let short = try journal.place()
        defer { short.remove() }
        let kept = try JournaledServer.start(
            short.flags + ["--history-retention", "events:50"],
            systems: [HostedSystem(CounterSystem())]
        )
        let session = try await kept.api.create()
        for _ in 1...250 { _ = try await kept.api.post(session, #"{"type":"increment"}"#) }
        let page = try await Self.get(kept, "/v1/sessions/\(session)/history?limit=10")
        #expect(page["keptFrom"] == .int(100))
        if case .array(let entries)? = page["entries"] { #expect(entries.first?["rev"] == .int(101)) }
        let gone = try await kept.api.send("GET", "/v1/sessions/\(session)/states/99")
        #expect(gone.status == 410)
        #expect(gone.bodyText.contains("ask for 100 or later"))
        let hundred = try await Self.get(kept, "/v1/sessions/\(session)/states/100")
        #expect(hundred["state"] == .object(["count": .int(100)]))
        await kept.stop()
    }

    @Test func aJournaledStateChangedWithItsChecksumFailsLoudly() async throws {
        let directory = TemporaryDataDirectory()
        defer { directory.remove() }
        let flags = ["--data-dir", directory.path, "--history-retention", "forever"]
        let server = try JournaledServer.start(flags, systems: [HostedSystem(CounterSystem())])
        let id = try await server.api.create()
        for _ in 1...250 { _ = try await server.api.post(id, #"{"type":"increment"}"#) }
        await server.stop()
        // The kept snapshot at 200 says count+1000, written through the journal, so its record checksum is right.
        do {
            let journal = try Journal.open(
                directory: directory.path,
                configuration: .init(),
                logger: JournaledSessions.quiet
            )
            defer { journal.close() }
            try await journal.append([.snapshot(sessionID: id, revision: 200, state: #"{"count":1200}"#)])
        }
        let restarted = try JournaledServer.start(flags, systems: [HostedSystem(CounterSystem())])
        for revision in [200, 201, 250] {
            let answer = try await restarted.api.send("GET", "/v1/sessions/\(id)/states/\(revision)")
            #expect(answer.status == 500, "\(revision): \(answer.bodyText)")
            #expect(answer.bodyText.contains("history-mismatch"))
            #expect(answer.bodyText.contains("revision 200"), "\(answer.bodyText)")
            #expect(!answer.bodyText.contains(#""state""#))
        }
        #expect(
            try await Self.get(restarted, "/v1/sessions/\(id)/states/199")["state"] == .object(["count": .int(199)])
        )
        await restarted.stop()
    }

    @Test(arguments: ServiceJournal.allCases)
    func theListAndItsCountsAgreeWithWhatWasCreatedPassivatedAndDeleted(_ journal: ServiceJournal) async throws {
        let place = try journal.place()
        defer { place.remove() }
        let server = try JournaledServer.start(
            place.flags + ["--sessions-max-active", "4"],
            systems: [HostedSystem(CounterSystem()), HostedSystem(InspectedSystem())]
        )
        var ids: [String] = []
        for _ in 0..<6 { ids.append(try await server.api.create()) }  // the first two are passivated
        let other = try await server.api.create("inspected")  // passivates the third
        let deleted = try await server.api.send("DELETE", "/v1/sessions/\(ids[5])")
        #expect(deleted.status == 204)
        // A page holds `limit` sessions whichever part they come from: the three in memory, then a journaled one.
        let first = try await Self.get(server, "/v1/sessions?limit=4")
        var statuses: [JSONValue?] = []
        if case .array(let page)? = first["sessions"] { statuses = page.map { $0["status"] } }
        #expect(statuses == [.string("active"), .string("active"), .string("active"), .string("passive")])
        #expect(first["next"] != .null)
        let all = try await Self.collect(server, "/v1/sessions?limit=2")
        #expect(Set(all.map(\.id)) == Set(ids.prefix(5) + [other]))
        #expect(all.count == 6)
        let status = Dictionary(all.map { ($0.id, $0.status) }, uniquingKeysWith: { first, _ in first })
        #expect(ids.prefix(3).allSatisfy { status[$0] == "passive" })
        #expect(ids[3...4].allSatisfy { status[$0] == "active" })
        #expect(status[other] == "active")
        #expect(Set(try await Self.collect(server, "/v1/sessions?status=passive").map(\.id)) == Set(ids.prefix(3)))
        #expect(Set(try await Self.collect(server, "/v1/sessions?system=inspected").map(\.id)) == [other])
        let counts = try await Self.get(server, "/v1/sessions")["counts"]
        #expect(
            counts?["systems"]?["counter"]
                == .object(["active": .int(2), "passive": .int(3), "broken": .int(0), "total": .int(5)])
        )
        #expect(counts?["systems"]?["inspected"]?["total"] == .int(1))
        #expect(counts?["total"]?["total"] == .int(6))
        let refused = try await server.api.send("GET", "/v1/sessions?status=sleeping")
        #expect(refused.status == 400)
        await server.stop()
    }

    /// An empty `type` is the client's mistake (no event has an empty type): 400 saying what to send, not an empty
    /// page that looks like a history with nothing in it. `after` with `before` gives the entries between the two.
    @Test func anEmptyTypeIsRefusedAndARangeGivesTheEntriesBetween() async throws {
        let directory = TemporaryDataDirectory()
        defer { directory.remove() }
        let server = try JournaledServer.start(
            ["--data-dir", directory.path],
            systems: [HostedSystem(CounterSystem())]
        )
        let id = try await server.api.create()
        for _ in 0..<5 { _ = try await server.api.post(id, #"{"type":"increment"}"#) }
        let refused = try await server.api.send("GET", "/v1/sessions/\(id)/history?type=")
        #expect(refused.status == 400, "\(refused.bodyText)")
        #expect(refused.bodyText.contains("invalid-request"), "\(refused.bodyText)")
        let between = try await Self.get(server, "/v1/sessions/\(id)/history?after=1&before=4")
        if case .array(let entries)? = between["entries"] {
            #expect(entries.map { $0["rev"] } == [.int(2), .int(3)])
        } else {
            Issue.record("no entries: \(between)")
        }
        await server.stop()
    }

    @Test func anEffectsEventNamesItsFeedbackAndRedactedValuesNeverLeave() async throws {
        let directory = TemporaryDataDirectory()
        defer { directory.remove() }
        let server = try JournaledServer.start(
            ["--data-dir", directory.path, "--history-retention", "forever"],
            systems: [HostedSystem(InspectedSystem())]
        )
        let id = try await server.api.create("inspected")
        _ = try await server.api.post(id, #"{"type":"set","secret":"hunter2-secret"}"#)
        _ = try await server.api.post(id, #"{"type":"ping"}"#)
        // The pong is the feedback's: wait (bounded by the time limit) until it is journaled.
        var history = JSONValue.null
        while true {
            history = try await Self.get(server, "/v1/sessions/\(id)/history")
            if case .array(let entries)? = history["entries"], entries.count == 3 { break }
            try await Task.sleep(for: .milliseconds(10))
        }
        guard case .array(let entries)? = history["entries"] else { return }
        #expect(entries.map { $0["origin"] } == [.string("client"), .string("client"), .string("effect")])
        #expect(entries.map { $0["feedback"] } == [.null, .null, .string("ponger")])
        var answers = [String(decoding: history.serialized(), as: UTF8.self)]
        for path in ["/states/1", "/states/3", "/diff?from=0&to=3"] {
            answers.append(try await server.api.send("GET", "/v1/sessions/\(id)\(path)").bodyText)
        }
        answers.append(try await server.api.send("GET", "/v1/sessions").bodyText)
        for answer in answers {
            #expect(!answer.contains("hunter2"), "\(answer)")
        }
        #expect(answers[1].contains("[redacted]"))
        // What the session's own routes show is not the inspection's: the state itself keeps the secret.
        #expect(try await server.api.send("GET", "/v1/sessions/\(id)").bodyText.contains("hunter2-secret"))
        await server.stop()

        let off = try JournaledServer.start(
            ["--data-dir", "none", "--inspector", "off"],
            systems: [HostedSystem(InspectedSystem())]
        )
        let session = try await off.api.create("inspected")
        let refused = try await off.api.send("GET", "/v1/sessions/\(session)/history")
        #expect(refused.status == 404)
        #expect(refused.bodyText.contains("--inspector on"))
        await off.stop()
    }

    /// A traffic light created running takes its first step (the timer's deadline) from its feedback before the
    /// session's recorder is attached, so the journal holds that state as the snapshot of its first step, with no
    /// event for it: the inspection reads the history across that gap from the creation on (it answered 500 "the
    /// journal holds revisions up to 0, not 1", found by schemathesis once the inspection routes met real sessions).
    @Test(arguments: ServiceJournal.allCases)
    func aFirstStepAnEffectTookBeforeTheRecorderIsReadAcrossItsGap(_ journal: ServiceJournal) async throws {
        let place = try journal.place()
        defer { place.remove() }
        let server = try JournaledServer.start(
            place.flags + ["--history-retention", "forever", "--clock", "manual"],
            systems: [HostedSystem(TrafficLightSystem())]
        )
        let given = #"{"phase":"red","running":true,"changes":0}"#
        let id = try await server.api.create("traffic-light", state: given)
        let first = try await Self.get(server, "/v1/sessions/\(id)/states/1")
        #expect(first["state"]?["deadline"] != .null && first["state"]?["deadline"] != nil, "\(first)")
        let creation = try await Self.get(server, "/v1/sessions/\(id)/states/0")
        #expect(creation["state"] == (try JSONValue(parsing: given.utf8)))
        let gap = try await Self.get(server, "/v1/sessions/\(id)/diff?from=0&to=1")
        let deadline = try #require(first["state"]?["deadline"])
        let added = JSONValue.object(["op": .string("add"), "path": .string("/deadline"), "value": deadline])
        #expect(gap["patch"] == .array([added]))
        // Three timers fire: events 2 to 4, whose history follows on from the state the gap ends at.
        let advanced = try await server.api.send("POST", "/v1/clock/advance", body: #"{"milliseconds":10000}"#)
        #expect(advanced.status == 200, "\(advanced.bodyText)")
        var history = JSONValue.null
        while true {
            history = try await Self.get(server, "/v1/sessions/\(id)/history")
            if case .int(let head)? = history["head"], head >= 4 { break }
            try await Task.sleep(for: .milliseconds(10))
        }
        #expect(history["keptFrom"] == .int(0))
        guard case .array(let entries)? = history["entries"] else {
            Issue.record("no entries: \(history)")
            return
        }
        #expect(entries.first?["rev"] == .int(2))
        var state = try #require(first["state"])
        for entry in entries {
            state = try JSONPatch(json: try #require(entry["patch"])).apply(to: state)
            guard case .int(let rev)? = entry["rev"] else { continue }
            #expect(try await Self.get(server, "/v1/sessions/\(id)/states/\(rev)")["state"] == state)
        }
        await server.stop()
    }

    // MARK: - Helpers

    private static func get(_ server: JournaledServer, _ path: String) async throws -> JSONValue {
        let answer = try await server.api.send("GET", path)
        #expect(answer.status == 200, "\(path): \(answer.bodyText)")
        return try JSONValue(parsing: answer.body)
    }

    /// Every session of the list, following `next`.
    private static func collect(
        _ server: JournaledServer,
        _ path: String
    ) async throws -> [(id: String, status: String)] {
        var sessions: [(id: String, status: String)] = []
        var cursor: String?
        repeat {
            let separator = path.contains("?") ? "&" : "?"
            let page = try await get(server, path + (cursor.map { "\(separator)cursor=\($0)" } ?? ""))
            if case .array(let entries)? = page["sessions"] {
                for entry in entries {
                    if case .string(let id)? = entry["id"], case .string(let status)? = entry["status"] {
                        sessions.append((id, status))
                    }
                }
            }
            if case .string(let next)? = page["next"] { cursor = next } else { cursor = nil }
        } while cursor != nil
        return sessions
    }

    private static func counterStep(_ event: JSONValue) -> Int64 {
        switch event["type"] {
        case .string("increment"): 1
        case .string("decrement"): -1
        case .string("add"): if case .int(let amount)? = event["amount"] { amount } else { 0 }
        default: 0
        }
    }
}

extension JSONValue {
    /// The member `key` of an object; nil for anything else.
    fileprivate subscript(key: String) -> JSONValue? {
        if case .object(let members) = self { return members[key] }
        return nil
    }
}
