import Foundation
import Testing

/// Creating under a client-chosen id, and conditional posts racing each other, against the real binary.
@Suite(.serialized, .timeLimit(.minutes(1)))
struct SessionWriteTests {
    private func put(_ url: String, _ body: String) throws -> CurlResult {
        try curl(["-X", "PUT", "-H", "Content-Type: application/json", "--data-binary", body, url])
    }

    @Test func putCreatesUnderTheChosenIdAndARepeatAnswersTheSession() throws {
        let server = try RunningServer()
        defer { server.stop() }
        let id = "3q2-7wAAAAAAAAAAAAAAAA"
        let url = "\(server.base)/v1/sessions/\(id)"
        let created = try put(url, #"{"system":"counter","state":{"count":4}}"#)
        #expect(created.status == 201)
        #expect(created.json["id"] as? String == id)
        #expect(created.headers["location"] == "/v1/sessions/\(id)")
        #expect(try postJSON("\(url)/events", #"{"type":"increment"}"#).status == 200)

        // A retried PUT (its answer was lost) gets the session as it is now; nothing restarts.
        let again = try put(url, #"{"system":"counter"}"#)
        #expect(again.status == 200)
        #expect((again.json["state"] as? [String: Any])?["count"] as? Int == 5)
        #expect(again.headers["etag"] != nil)

        let otherSystem = try put(url, #"{"system":"catch"}"#)
        #expect(otherSystem.status == 409)
        #expect(otherSystem.headers["content-type"] == "application/problem+json")
        #expect(try put(url, #"{"system":"counter","state":{"count":0}}"#).status == 409)
        #expect((try curl([url]).json["state"] as? [String: Any])?["count"] as? Int == 5)
    }

    @Test func putRefusesAnIdThatIsNotOneAndUnknownSystems() throws {
        let server = try RunningServer()
        defer { server.stop() }
        let bad = try put("\(server.base)/v1/sessions/short", #"{"system":"counter"}"#)
        #expect(bad.status == 400)
        #expect((bad.json["detail"] as? String)?.contains("22 base64url characters") == true)
        let unknown = try put("\(server.base)/v1/sessions/AAAAAAAAAAAAAAAAAAAAAA", #"{"system":"nope"}"#)
        #expect(unknown.status == 404)
        #expect(try curl(["\(server.base)/v1/sessions/AAAAAAAAAAAAAAAAAAAAAA"]).status == 404)
    }

    @Test func ofConcurrentPutsForOneNewIdExactlyOneCreatesIt() throws {
        let server = try RunningServer()
        defer { server.stop() }
        // 10 rounds of 8 threads putting the same fresh id at once: one 201, the others 200 (it exists) or 409
        // with Retry-After (it is being created right now); never two sessions, never a 5xx.
        let script = """
            import http.client, json, threading, sys, base64, os
            port = int(sys.argv[1])
            rounds = []
            for _ in range(10):
                sid = base64.urlsafe_b64encode(os.urandom(16)).decode().rstrip("=")
                answers = []
                barrier = threading.Barrier(8)
                def worker():
                    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
                    barrier.wait()
                    conn.request("PUT", f"/v1/sessions/{sid}", body='{"system":"counter"}',
                                 headers={"Content-Type": "application/json"})
                    response = conn.getresponse()
                    response.read()
                    answers.append([response.status, response.getheader("Retry-After") is not None])
                    conn.close()
                threads = [threading.Thread(target=worker) for _ in range(8)]
                for t in threads: t.start()
                for t in threads: t.join()
                rounds.append(answers)
            print(json.dumps(rounds))
            """
        let process = Process()
        let output = Pipe()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["timeout", "40", "python3", "-c", script, String(server.port)]
        process.standardOutput = output
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        let rounds = try #require(try JSONSerialization.jsonObject(with: data) as? [[[Any]]])
        #expect(rounds.count == 10)
        for answers in rounds {
            let statuses = answers.compactMap { $0.first as? Int }
            #expect(statuses.count == 8)
            #expect(statuses.filter { $0 == 201 }.count == 1, "\(statuses)")
            #expect(statuses.allSatisfy { [200, 201, 409].contains($0) }, "\(statuses)")
            for answer in answers where answer.first as? Int == 409 { #expect(answer.last as? Bool == true) }
        }
        let metrics = try curl(["\(server.base)/metrics"]).body
        #expect(metrics.contains("feedbackhost_sessions 10.0"))
    }

    @Test func ofConcurrentPostsWithTheSameIfMatchExactlyOneIsApplied() throws {
        let server = try RunningServer()
        defer { server.stop() }
        let created = try postJSON("\(server.base)/v1/sessions", #"{"system":"counter"}"#)
        let id = try #require(created.json["id"] as? String)
        // 20 rounds; in each, 8 threads post at once with the cursor they all read; only one may win.
        let script = """
            import http.client, json, threading, sys
            port, sid = int(sys.argv[1]), sys.argv[2]
            def call(method, body=None, headers={}):
                conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
                conn.request(method, f"/v1/sessions/{sid}" + ("/events" if body else ""), body=body,
                             headers={"Content-Type": "application/json", **headers})
                response = conn.getresponse()
                data = response.read()
                conn.close()
                return response.status, response.getheader("ETag"), data
            rounds = []
            for _ in range(20):
                _, etag, _ = call("GET")
                statuses = []
                barrier = threading.Barrier(8)
                def worker():
                    barrier.wait()
                    statuses.append(call("POST", '{"type":"increment"}', {"If-Match": etag})[0])
                threads = [threading.Thread(target=worker) for _ in range(8)]
                for t in threads: t.start()
                for t in threads: t.join()
                rounds.append(sorted(statuses))
            print(json.dumps(rounds))
            """
        let process = Process()
        let output = Pipe()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["timeout", "40", "python3", "-c", script, String(server.port), id]
        process.standardOutput = output
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        let rounds = try #require(try JSONSerialization.jsonObject(with: data) as? [[Int]])
        #expect(rounds.count == 20)
        for statuses in rounds {
            #expect(statuses == [200] + Array(repeating: 412, count: 7), "\(statuses)")
        }
        let state = try curl(["\(server.base)/v1/sessions/\(id)"])
        #expect((state.json["state"] as? [String: Any])?["count"] as? Int == 20)
    }
}
