import ConformanceChecks
import CurlClient
import Foundation
import HTTPServer
import Logging
import Synchronization
import Testing
import Upstream

/// `--clock manual` against the real binary over HTTP: timers fire when a test advances the clock, in deadline
/// order, and an advance answers only once what they started has settled, so a GET right after sees the outcome.
/// No test sleeps for a timer: a 30 s Retry-After or a traffic light's 24 s are crossed in milliseconds.
@Suite(.serialized, .timeLimit(.minutes(1)))
struct ManualClockTests {
    /// The manual clock's first time in these tests (2023-11-14T22:13:20Z): far from the real time, so a timer
    /// following the real clock would show.
    static let start: Int64 = 1_700_000_000_000

    static func startServer(_ arguments: [String] = []) async throws -> StreamTestServer {
        let clock = arguments.contains("--clock") ? [] : ["--clock", "manual"]
        let start = arguments.contains("--clock-start-ms") ? [] : ["--clock-start-ms", String(Self.start)]
        return try await StreamTestServer.start(clock + start + arguments)
    }

    /// The traffic light through three full cycles (red 4 s, green 3 s, yellow 1 s): a millisecond before each
    /// phase's end the lamp is unchanged; at its end it has changed, with the next deadline one phase later.
    @Test func aTrafficLightRunsThreeFullCyclesAsTheClockIsAdvanced() async throws {
        let running = try await Self.startServer()
        let api = running.api
        let id = try await api.create("traffic-light")
        try await api.post(id, #"{"type":"start"}"#)
        // An advance by nothing answers once the light's first deadline is in its state.
        var clock = try await api.advance(milliseconds: 0)
        #expect(clock["now"] as? Int == Int(Self.start))
        var light = try await api.state(id)
        #expect(light["phase"] as? String == "red")
        #expect(light["deadline"] as? Int == Int(Self.start) + 4000)
        let phases: [(String, Int)] = [("red", 4000), ("green", 3000), ("yellow", 1000)]
        var changes = 0
        for _ in 0..<3 {
            for (index, (phase, duration)) in phases.enumerated() {
                let next = phases[(index + 1) % phases.count]
                clock = try await api.advance(milliseconds: duration - 1)
                #expect(clock["timersFired"] as? Int == 0)
                light = try await api.state(id)
                #expect(light["phase"] as? String == phase)
                #expect(light["changes"] as? Int == changes)
                clock = try await api.advance(milliseconds: 1)
                #expect(clock["timersFired"] as? Int == 1)
                #expect(clock["settled"] as? Bool == true)
                changes += 1
                light = try await api.state(id)
                #expect(light["phase"] as? String == next.0)
                #expect(light["changes"] as? Int == changes)
                #expect(light["deadline"] as? Int == (clock["now"] as? Int ?? 0) + next.1)
            }
        }
        #expect(changes == 9)
        #expect(try await api.clock()["now"] as? Int == Int(Self.start) + 3 * 8000)
        await running.stop()
    }

    /// Play Catch: the machine holds the ball until a second has passed on the clock, not a millisecond less.
    @Test func playCatchThrowsBackWhenTheClockHasMovedASecond() async throws {
        let running = try await Self.startServer()
        let api = running.api
        let id = try await api.create("catch")
        try await api.post(id, #"{"type":"throwToMachine"}"#)
        try await api.advance(milliseconds: 999)
        var ball = try await api.state(id)
        #expect(ball["holder"] as? String == "machine")
        #expect(ball["throwBackAt"] as? Int == Int(Self.start) + 1000)
        let answer = try await api.advance(milliseconds: 1)
        #expect(answer["timersFired"] as? Int == 1)
        ball = try await api.state(id)
        #expect(ball["holder"] as? String == "human")
        #expect(ball["throwCount"] as? Int == 2)
        // A second round, skipping past the deadline in one advance: it fires once, at its deadline.
        try await api.post(id, #"{"type":"throwToMachine"}"#)
        let long = try await api.advance(milliseconds: 60_000)
        #expect(long["timersFired"] as? Int == 1)
        ball = try await api.state(id)
        #expect(ball["holder"] as? String == "human")
        #expect(ball["throwCount"] as? Int == 4)
        #expect(try await api.metric("feedbackhost_clock_manual") == 1)
        #expect(try await api.metric("feedbackhost_clock_manual_time_seconds") == Double(Self.start + 61_000) / 1000)
        await running.stop()
    }

    /// The paging system's retry after a 429 with `Retry-After: 30` sleeps on the manual clock: the upstream sees
    /// no second request until the clock has moved 30 s, and sees it as soon as it has (the fetch itself is real).
    @Test func aPagingRetryAfter429WaitsForThirtySecondsOfTheClock() async throws {
        let upstream = try ThrottlingUpstream()
        let running = try await Self.startServer(["--upstream", "http://127.0.0.1:\(upstream.port)/search"])
        let api = running.api
        let id = try await api.create("paging")
        try await api.post(id, #"{"type":"search","query":"lamp"}"#)
        // Settles once the first fetch was answered 429 and the retry sleeps on the clock.
        try await api.advance(milliseconds: 0)
        var search = try await api.state(id)
        #expect(upstream.requests == 1)
        #expect(search["retries"] as? Int == 1)
        #expect(search["pagesLoaded"] as? Int == 0)
        try await api.advance(milliseconds: 29_999)
        #expect(upstream.requests == 1)
        search = try await api.state(id)
        #expect(search["pagesLoaded"] as? Int == 0)
        let answer = try await api.advance(milliseconds: 1)
        #expect(answer["timersFired"] as? Int == 1)
        #expect(answer["settled"] as? Bool == true)
        #expect(upstream.requests == 2)
        search = try await api.state(id)
        #expect(search["pagesLoaded"] as? Int == 1)
        #expect((search["items"] as? [Any])?.count == 1)
        #expect(search["status"] as? String == "exhausted")
        await running.stop()
        await upstream.stop()
    }

    /// An upstream fetch is real and may hang: an advance waits for it at most `--clock-settle-ms` of real time,
    /// then answers with `settled: false` and the effect still busy, instead of hanging with it.
    @Test func anAdvanceWaitsForAFetchUnderWayOnlyAsLongAsTheSettleLimit() async throws {
        let upstream = try ThrottlingUpstream(answers: false)
        let running = try await Self.startServer([
            "--upstream", "http://127.0.0.1:\(upstream.port)/search", "--clock-settle-ms", "100",
        ])
        let api = running.api
        let id = try await api.create("paging")
        try await api.post(id, #"{"type":"search","query":"lamp"}"#)
        let answer = try await api.advance(milliseconds: 0)
        #expect(answer["settled"] as? Bool == false)
        #expect(answer["busyEffects"] as? Int == 1)
        #expect(try await api.state(id)["status"] as? String == "loading")
        await running.stop()
        await upstream.stop()
    }

    /// The manual time is kept in the data directory: after a restart the clock resumes where it was, and a
    /// passive session's journaled deadline (in manual time) fires when an advance reaches it.
    @Test func aRestartKeepsTheManualTimeAndItsJournaledDeadlines() async throws {
        let directory = TemporaryDataDirectory()
        defer { directory.remove() }
        let first = try await Self.startServer(["--data-dir", directory.path])
        try await first.api.advance(milliseconds: 5000)
        let id = try await first.api.create("catch")
        try await first.api.post(id, #"{"type":"throwToMachine"}"#)
        try await first.api.advance(milliseconds: 400)
        #expect(try await first.api.state(id)["throwBackAt"] as? Int == Int(Self.start) + 6000)
        await first.stop()

        let second = try await Self.startServer(["--data-dir", directory.path, "--clock-start-ms", "1"])
        let api = second.api
        #expect(try await api.clock()["now"] as? Int == Int(Self.start) + 5400)
        let answer = try await api.advance(milliseconds: 600)
        #expect(answer["sessionsWoken"] as? Int == 1)
        let ball = try await api.state(id)
        #expect(ball["holder"] as? String == "human")
        await second.stop()
    }

    /// Bodies an advance cannot use get a 400 or 415 that says what to send; the clock does not move, nor back.
    @Test func anAdvanceThatCannotBeDoneSaysWhatToSend() async throws {
        let running = try await Self.startServer()
        let api = running.api
        for body in [
            #"{}"#, #"{"milliseconds":-1}"#, #"{"milliseconds":1.5}"#, #"{"to":-1}"#, #"{"milliseconds":1,"to":2}"#,
            #"[1]"#,
        ] {
            let response = try await api.send("POST", "/v1/clock/advance", body: body)
            #expect(response.status == 400, "\(body)")
            #expect(response.headers["Content-Type"] == "application/problem+json")
            #expect(jsonObject(response.bodyText)["detail"] as? String != nil)
        }
        let response = try await api.client.fetch(
            .init(
                method: "POST",
                url: api.base + "/v1/clock/advance",
                headers: ["Content-Type": "text/plain"],
                body: Array(#"{"milliseconds":1}"#.utf8)
            )
        )
        #expect(response.status == 415)
        #expect(try await api.clock()["now"] as? Int == Int(Self.start))
        // A whole number written with a fraction of zero is one, as JSON Schema counts them.
        #expect(try await api.send("POST", "/v1/clock/advance", body: #"{"milliseconds":50.0}"#).status == 200)
        let to = try await api.send("POST", "/v1/clock/advance", body: #"{"to":\#(Self.start + 250)}"#)
        #expect(to.status == 200)
        #expect(try await api.clock()["now"] as? Int == Int(Self.start) + 250)
        // A time the clock has passed moves nothing.
        let back = try await api.send("POST", "/v1/clock/advance", body: #"{"to":1}"#)
        #expect(back.status == 200)
        #expect(try await api.clock()["now"] as? Int == Int(Self.start) + 250)
        // The clock stops at the end of the year 9999 (RFC 3339's last).
        let end = 253_402_300_799_999
        #expect(try await api.send("POST", "/v1/clock/advance", body: #"{"to":\#(end)}"#).status == 200)
        let last = try await api.advance(milliseconds: 316_224_000_000)
        #expect(last["now"] as? Int == end)
        #expect(last["time"] as? String == "9999-12-31T23:59:59.999Z")
        await running.stop()
    }

    /// Advances sent at once take turns: each answers after its own span, and the clock ends at the sum.
    @Test func advancesSentAtOnceTakeTurns() async throws {
        let running = try await Self.startServer()
        let api = running.api
        let id = try await api.create("catch")
        try await api.post(id, #"{"type":"throwToMachine"}"#)
        async let first = api.advance(milliseconds: 700)
        async let second = api.advance(milliseconds: 700)
        let answers = try await [first, second]
        #expect(answers.compactMap { $0["timersFired"] as? Int }.sorted() == [0, 1])
        #expect(try await api.clock()["now"] as? Int == Int(Self.start) + 1400)
        #expect(try await api.state(id)["holder"] as? String == "human")
        await running.stop()
    }

    /// `--clock skip`: whenever every effect is asleep on the clock it jumps to the next deadline by itself, so
    /// the machine throws the ball back with nobody advancing anything.
    @Test func aSkippingClockThrowsTheBallBackByItself() async throws {
        let running = try await Self.startServer(["--clock", "skip"])
        let api = running.api
        let id = try await api.create("catch")
        try await api.post(id, #"{"type":"throwToMachine"}"#)
        var holder: String?
        for _ in 0..<500 {
            holder = try await api.state(id)["holder"] as? String
            if holder == "human" { break }
            try await Task.sleep(for: .milliseconds(10))
        }
        #expect(holder == "human")
        #expect(try await api.clock()["now"] as? Int ?? 0 >= Int(Self.start) + 1000)
        await running.stop()
    }

    /// Without `--clock manual` there are no clock routes (404) and timers follow the real time.
    @Test func withoutTheOptionTheClockRoutesAre404AndTimersFollowTheRealTime() async throws {
        let running = try await StreamTestServer.start()
        let api = running.api
        let get = try await api.send("GET", "/v1/clock")
        #expect(get.status == 404)
        let post = try await api.send("POST", "/v1/clock/advance", body: #"{"milliseconds":60000}"#)
        #expect(post.status == 404)
        #expect(try await api.metric("feedbackhost_clock_manual") == 0)
        let id = try await api.create("catch")
        let before = Int(Date().timeIntervalSince1970 * 1000)
        try await api.post(id, #"{"type":"throwToMachine"}"#)
        var deadline: Int?
        for _ in 0..<500 where deadline == nil {
            deadline = try await api.state(id)["throwBackAt"] as? Int
            if deadline == nil { try await Task.sleep(for: .milliseconds(10)) }
        }
        let after = Int(Date().timeIntervalSince1970 * 1000)
        // The deadline is the real time of the catch plus a second (read between the two real readings).
        #expect(deadline.map { $0 >= before + 1000 && $0 <= after + 1000 } == true)
        await running.stop()
    }
}

extension SessionAPIClient {
    /// `POST /v1/clock/advance` by `milliseconds`; the answer's JSON object (a non-200 throws).
    @discardableResult
    func advance(milliseconds: Int) async throws -> [String: Any] {
        let response = try await send("POST", "/v1/clock/advance", body: #"{"milliseconds":\#(milliseconds)}"#)
        guard response.status == 200 else {
            throw SSEReader.Timeout(what: "an advance (got \(response.status) \(response.bodyText))")
        }
        return jsonObject(response.bodyText)
    }

    /// `GET /v1/clock`.
    func clock() async throws -> [String: Any] {
        jsonObject(try await send("GET", "/v1/clock").bodyText)
    }

    /// The session's state.
    func state(_ id: String) async throws -> [String: Any] {
        jsonObject(try await send("GET", "/v1/sessions/\(id)").bodyText)["state"] as? [String: Any] ?? [:]
    }
}

/// A search upstream on 127.0.0.1:0 (this project's HTTPServer) that answers its first request 429 with
/// `Retry-After: 30` and every later one with a page of one item, or (`answers: false`) never answers; it counts
/// the requests.
final class ThrottlingUpstream: Sendable {
    private final class Count: Sendable {
        let value = Atomic<Int>(0)
        /// The answers not given (a responder let go answers 500).
        let held = Mutex<[Responder]>([])
    }

    private let server: Server
    private let count = Count()
    let port: Int

    init(answers: Bool = true) throws {
        var router = Router()
        let count = count
        router.route(
            .get,
            "/search",
            deferred: { (_: Request, responder: Responder) in
                let number = count.value.add(1, ordering: .relaxed).newValue
                // Not answering keeps the fetch under way until the server shuts down.
                guard answers else { return count.held.withLock { $0.append(responder) } }
                if number == 1 {
                    var response = Response.json(Array(#"{"message":"slow down"}"#.utf8), status: 429)
                    response.headers.add(name: "Retry-After", value: "30")
                    return responder.respond(response)
                }
                responder.respond(Response.json(Array(#"{"total_count":1,"items":[{"name":"lamp"}]}"#.utf8)))
            }
        )
        var logger = Logger(label: "throttling-upstream")
        logger.logLevel = .warning
        server = Server(
            configuration: HTTPServerConfiguration(host: "127.0.0.1", port: 0),
            router: router,
            logger: logger
        )
        port = try server.start()
    }

    /// Requests served so far.
    var requests: Int { count.value.load(ordering: .relaxed) }

    func stop() async { await server.shutdown(deadline: .seconds(1)) }
}
