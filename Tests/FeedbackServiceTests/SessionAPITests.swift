import Foundation
import Testing

/// The REST API of the real `feedback-host` binary, over loopback, with curl and Python as clients.
@Suite(.serialized, .timeLimit(.minutes(1)))
struct SessionAPITests {
    private func withServer(_ body: (RunningServer) throws -> Void) throws {
        let server = try RunningServer()
        defer { server.stop() }
        try body(server)
    }

    private func createCounter(_ server: RunningServer) throws -> String {
        let created = try postJSON("\(server.base)/v1/sessions", #"{"system":"counter"}"#)
        #expect(created.status == 201)
        return try #require(created.json["id"] as? String)
    }

    @Test func healthAndSystemsAnswer() throws {
        try withServer { server in
            #expect(try curl(["\(server.base)/healthz"]).status == 200)
            let systems = try curl(["\(server.base)/v1/systems"])
            let list = systems.json["systems"] as? [[String: Any]] ?? []
            #expect(list.compactMap { $0["name"] as? String } == ["counter", "catch", "traffic-light", "paging"])
            #expect((list.first?["clientEvents"] as? [String]) == ["increment", "decrement", "add"])
        }
    }

    @Test func counterSessionLifecycle() throws {
        try withServer { server in
            let created = try postJSON("\(server.base)/v1/sessions", #"{"system":"counter","state":{"count":10}}"#)
            #expect(created.status == 201)
            let id = try #require(created.json["id"] as? String)
            #expect(id.utf8.count == 22)
            #expect(created.headers["location"] == "/v1/sessions/\(id)")
            #expect((created.json["state"] as? [String: Any])?["count"] as? Int == 10)
            let url = "\(server.base)/v1/sessions/\(id)"

            let one = try postJSON("\(url)/events", #"{"type":"increment"}"#)
            #expect(one.status == 200)
            #expect(one.json["rev"] as? Int == 1)
            let batch = try postJSON("\(url)/events", #"{"events":[{"type":"add","amount":5},{"type":"decrement"}]}"#)
            #expect((batch.json["state"] as? [String: Any])?["count"] as? Int == 15)
            #expect(batch.json["rev"] as? Int == 3)

            let snapshot = try curl([url])
            #expect(snapshot.status == 200)
            let etag = try #require(snapshot.headers["etag"])
            #expect(etag == "\"\(batch.json["cursor"] as? String ?? "")\"")
            #expect(try curl(["-H", "If-None-Match: \(etag)", url]).status == 304)

            #expect(try curl(["-X", "DELETE", url]).status == 204)
            #expect(try curl([url]).status == 404)
            #expect(try postJSON("\(url)/events", #"{"type":"increment"}"#).status == 404)
        }
    }

    @Test func badInputGetsAProblemAndChangesNothing() throws {
        try withServer { server in
            let id = try createCounter(server)
            let events = "\(server.base)/v1/sessions/\(id)/events"

            let malformed = try postJSON(events, #"{"type":"add", "amount": x}"#)
            #expect(malformed.status == 400)
            #expect(malformed.headers["content-type"] == "application/problem+json")
            #expect(malformed.body.contains("line 1, column 26"))

            let notJSON = try curl(["-X", "POST", "--data-binary", "type=increment", events])
            #expect(notJSON.status == 415)

            let unknown = try postJSON(events, #"{"type":"multiply"}"#)
            #expect(unknown.status == 422)
            #expect(unknown.json["accepted"] as? [String] == ["increment", "decrement", "add"])

            let wrongField = try postJSON(events, #"{"type":"add","amount":"five"}"#)
            #expect(wrongField.status == 422)
            #expect(wrongField.body.contains("amount"))

            // One bad event in a batch refuses the whole batch.
            let mixed = try postJSON(events, #"{"events":[{"type":"increment"},{"type":"nope"}]}"#)
            #expect(mixed.status == 422)

            let stale = try postJSON(events, #"{"type":"increment"}"#, headers: ["-H", "If-Match: \"1-99\""])
            #expect(stale.status == 412)

            let tooLarge = try postJSON(
                events,
                "{\"type\":\"increment\",\"pad\":\"\(String(repeating: "x", count: 70_000))\"}"
            )
            #expect(tooLarge.status == 413)

            #expect(try curl(["\(server.base)/v1/sessions/not-an-id"]).status == 404)
            let wrongMethod = try curl(["-X", "DELETE", "\(server.base)/v1/systems"])
            #expect(wrongMethod.status == 405)
            #expect(wrongMethod.headers["allow"]?.contains("GET") == true)

            let noSystem = try postJSON("\(server.base)/v1/sessions", #"{"system":"chess"}"#)
            #expect(noSystem.status == 404)
            #expect(noSystem.body.contains("counter"))

            let state = try curl(["\(server.base)/v1/sessions/\(id)"])
            #expect(state.json["rev"] as? Int == 0)
            #expect((state.json["state"] as? [String: Any])?["count"] as? Int == 0)
        }
    }

    @Test func internalEventsAreRefusedNamingTheClientEvents() throws {
        try withServer { server in
            let created = try postJSON("\(server.base)/v1/sessions", #"{"system":"catch"}"#)
            let id = try #require(created.json["id"] as? String)
            let refused = try postJSON("\(server.base)/v1/sessions/\(id)/events", #"{"type":"throwToHuman"}"#)
            #expect(refused.status == 422)
            #expect(refused.json["accepted"] as? [String] == ["throwToMachine"])
        }
    }

    @Test func concurrentPythonClientsLoseNoEvent() throws {
        try withServer { server in
            let id = try createCounter(server)
            let script = """
                import http.client, json, threading, sys
                port, sid = int(sys.argv[1]), sys.argv[2]
                errors = []
                def worker():
                    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
                    for _ in range(50):
                        conn.request("POST", f"/v1/sessions/{sid}/events", body='{"type":"increment"}',
                                     headers={"Content-Type": "application/json"})
                        response = conn.getresponse()
                        response.read()
                        if response.status != 200:
                            errors.append(response.status)
                    conn.close()
                threads = [threading.Thread(target=worker) for _ in range(8)]
                for t in threads: t.start()
                for t in threads: t.join()
                print(json.dumps({"errors": errors}))
                """
            let process = Process()
            let output = Pipe()
            process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
            process.arguments = ["timeout", "30", "python3", "-c", script, String(server.port), id]
            process.standardOutput = output
            try process.run()
            let data = output.fileHandleForReading.readDataToEndOfFile()
            process.waitUntilExit()
            #expect(String(decoding: data, as: UTF8.self).contains(#""errors": []"#))
            let state = try curl(["\(server.base)/v1/sessions/\(id)"])
            #expect((state.json["state"] as? [String: Any])?["count"] as? Int == 400)
            #expect(state.json["rev"] as? Int == 400)
        }
    }

    @Test func idempotencyKeyAppliesARetriedPostOnce() throws {
        try withServer { server in
            let id = try createCounter(server)
            let events = "\(server.base)/v1/sessions/\(id)/events"
            let key = ["-H", "Idempotency-Key: 5b0e7c1e-retry"]
            let first = try postJSON(events, #"{"type":"add","amount":7}"#, headers: key)
            let again = try postJSON(events, #"{"type":"add","amount":7}"#, headers: key)
            #expect(first.status == 200 && again.status == 200)
            #expect(first.body == again.body)
            let other = try postJSON(events, #"{"type":"add","amount":8}"#, headers: key)
            #expect(other.status == 422)
            #expect(
                try postJSON(events, #"{"type":"increment"}"#, headers: ["-H", "Idempotency-Key: has space"]).status
                    == 400
            )
            // A failed request applies nothing, so its key stays free.
            let failed = try postJSON(events, #"{"type":"nope"}"#, headers: ["-H", "Idempotency-Key: k2"])
            #expect(failed.status == 422)
            #expect(
                try postJSON(events, #"{"type":"increment"}"#, headers: ["-H", "Idempotency-Key: k2"]).status == 200
            )
            let state = try curl(["\(server.base)/v1/sessions/\(id)"])
            #expect((state.json["state"] as? [String: Any])?["count"] as? Int == 8)
            #expect(state.json["rev"] as? Int == 2)
        }
    }

    @Test func readinessAndPrometheusMetricsReflectTheSessions() throws {
        try withServer { server in
            #expect(try curl(["\(server.base)/readyz"]).status == 200)
            let id = try createCounter(server)
            _ = try postJSON(
                "\(server.base)/v1/sessions/\(id)/events",
                #"{"events":[{"type":"increment"},{"type":"increment"}]}"#
            )
            _ = try postJSON("\(server.base)/v1/sessions/\(id)/events", #"{"type":"nope"}"#)
            let metrics = try curl(["\(server.base)/metrics"])
            #expect(metrics.status == 200)
            let lines = Set(metrics.body.split(separator: "\n").map(String.init))
            #expect(lines.contains("feedbackhost_sessions 1.0"))
            #expect(lines.contains(#"feedbackhost_events_total{outcome="applied"} 2"#))
            #expect(lines.contains(#"feedbackhost_events_total{outcome="rejected"} 1"#))
            #expect(lines.contains("feedbackhost_reduce_duration_seconds_count 2"))
            #expect(lines.contains { $0.hasPrefix("http_server_request_duration_seconds_count ") })
            // Every timer's buckets run from 1 µs to 10 s (the library's default began at 5 ms, where a reduce or a
            // request is long over): the same 22 bounds for each, cumulative up to `+Inf`, which is the count.
            let bounds = [
                "0.000001", "0.0000025", "0.000005", "0.00001", "0.000025", "0.00005", "0.0001", "0.00025", "0.0005",
                "0.001", "0.0025", "0.005", "0.01", "0.025", "0.05", "0.1", "0.25", "0.5", "1.0", "2.5", "5.0", "10.0",
                "+Inf",
            ]
            for timer in ["feedbackhost_reduce_duration_seconds", "http_server_request_duration_seconds"] {
                let buckets = metrics.body.split(separator: "\n").filter { $0.hasPrefix(timer + "_bucket{") }
                #expect(buckets.map { $0.split(separator: "\"")[1] } == bounds.map { Substring($0) }, "\(timer)")
                let counts = buckets.compactMap { $0.split(separator: " ").last.flatMap { Int($0) } }
                #expect(counts == counts.sorted(), "\(timer): cumulative")
                #expect(lines.contains("\(timer)_count \(counts.last ?? -1)"), "\(timer): +Inf is the count")
            }
        }
    }

    @Test func corsAllowsOnlyConfiguredOriginsAndAnswersPreflights() throws {
        let server = try RunningServer(arguments: ["--cors-origins", "https://app.example"])
        defer { server.stop() }
        let allowed = try curl(["-H", "Origin: https://app.example", "\(server.base)/v1/systems"])
        #expect(allowed.headers["access-control-allow-origin"] == "https://app.example")
        #expect(allowed.headers["vary"] == "Origin")
        let other = try curl(["-H", "Origin: https://evil.example", "\(server.base)/v1/systems"])
        #expect(other.headers["access-control-allow-origin"] == nil)
        let preflight = try curl([
            "-X", "OPTIONS", "-H", "Origin: https://app.example", "-H", "Access-Control-Request-Method: POST",
            "-H", "Access-Control-Request-Headers: content-type", "\(server.base)/v1/sessions/x/events",
        ])
        #expect(preflight.status == 204)
        #expect(preflight.headers["access-control-allow-methods"]?.contains("POST") == true)
        let refused = try curl([
            "-X", "OPTIONS", "-H", "Origin: https://evil.example", "-H", "Access-Control-Request-Method: POST",
            "\(server.base)/v1/sessions",
        ])
        #expect(refused.status == 403)
    }

    /// Every route's path answers its preflight (each is registered with its routes), the token and clock routes too.
    @Test func everyRoutesPathAnswersItsPreflight() throws {
        let directory = TemporaryDataDirectory()
        defer { directory.remove() }
        let server = try RunningServer(
            arguments: ["--cors-origins", "https://app.example", "--clock", "manual"] + directory.authFlags()
        )
        defer { server.stop() }
        for path in [
            "/v1/sessions/x/tokens", "/v1/clock", "/v1/clock/advance", "/v1/sessions/x/export", "/v1/sessions/x/forks",
            "/v1/sessions/x/effects/resume",
        ] {
            let preflight = try curl([
                "-X", "OPTIONS", "-H", "Origin: https://app.example", "-H", "Access-Control-Request-Method: POST",
                "\(server.base)\(path)",
            ])
            #expect(preflight.status == 204, "\(path) answered its preflight \(preflight.status)")
        }
    }

    /// Without a journal there is nothing to passivate into: an idle session ends.
    @Test func idleSessionsWithoutAJournalExpire() throws {
        let server = try RunningServer(arguments: ["--session-idle-ms", "200", "--data-dir", "none"])
        defer { server.stop() }
        let id = try createCounter(server)
        // Watch the metrics, not the session: reading the session would keep it alive.
        var expired = false
        for _ in 0..<100 where !expired {
            usleep(50_000)
            let metrics = try curl(["\(server.base)/metrics"]).body
            expired = metrics.contains(#"feedbackhost_sessions_ended_total{reason="expired"} 1"#)
        }
        #expect(expired)
        #expect(try curl(["\(server.base)/v1/sessions/\(id)"]).status == 404)
    }

    /// Without a journal nothing can leave memory to make room (with one, see PassivationTests).
    @Test func sessionCapFromAFlagAnswers503WithRetryAfter() throws {
        let server = try RunningServer(arguments: ["--sessions-max-active", "1", "--data-dir", "none"])
        defer { server.stop() }
        _ = try createCounter(server)
        let refused = try postJSON("\(server.base)/v1/sessions", #"{"system":"counter"}"#)
        #expect(refused.status == 503)
        #expect(refused.headers["retry-after"] != nil)
    }

    @Test func jsonLogFormatWritesOneObjectPerLine() throws {
        let log = FileManager.default.temporaryDirectory.appendingPathComponent("feedback-host-\(UUID()).log")
        defer { try? FileManager.default.removeItem(at: log) }
        let server = try RunningServer(arguments: ["--log-format", "json"], errorLog: log)
        _ = try curl(["\(server.base)/healthz"])
        #expect(server.stop() == 0)
        let lines = try String(contentsOf: log, encoding: .utf8).split(separator: "\n")
        let records = lines.compactMap {
            try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
        }
        #expect(!lines.isEmpty && records.count == lines.count)
        #expect(records.contains { ($0["msg"] as? String) == "GET /healthz 200" && $0["connection.id"] != nil })
    }

    @Test func aSecondSignalDuringShutdownIsHarmless() throws {
        let log = FileManager.default.temporaryDirectory.appendingPathComponent("feedback-host-\(UUID()).log")
        defer { try? FileManager.default.removeItem(at: log) }
        let server = try RunningServer(errorLog: log)
        _ = try createCounter(server)
        kill(server.process.processIdentifier, SIGTERM)
        kill(server.process.processIdentifier, SIGINT)
        #expect(server.stop() == 0)
        let text = try String(contentsOf: log, encoding: .utf8)
        #expect(!text.contains("MISUSE"))
        #expect(text.components(separatedBy: "shutting down").count == 2)
    }

    @Test func sigtermStopsTheServerCleanly() throws {
        let server = try RunningServer()
        _ = try createCounter(server)
        #expect(server.stop() == 0)
    }
}
