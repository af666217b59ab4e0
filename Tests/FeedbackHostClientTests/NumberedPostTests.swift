import FeedbackHostTesting
import Foundation
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// `Client-ID` and `Client-Sequence` on `POST /v1/sessions/{id}/events` (issue 34) against the real binary.
@Suite(.serialized, .timeLimit(.minutes(2)))
struct NumberedPostTests {
    struct Answer {
        var status: Int
        var json: [String: Any]
    }

    static func post(
        _ instance: LocalInstance,
        _ session: String,
        _ body: String,
        client: String = "phone",
        sequence: UInt64
    ) async throws -> Answer {
        var request = URLRequest(url: instance.url.appendingPathComponent("/v1/sessions/\(session)/events"))
        request.httpMethod = "POST"
        request.httpBody = Data(body.utf8)
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        request.setValue(client, forHTTPHeaderField: "Client-ID")
        request.setValue(String(sequence), forHTTPHeaderField: "Client-Sequence")
        let (data, response) = try await checkedData(for: request)
        let json = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any] ?? [:]
        return Answer(status: (response as? HTTPURLResponse)?.statusCode ?? 0, json: json)
    }

    static func counter(_ instance: LocalInstance) async throws -> String {
        let data = try await instance.checkedRequest("POST", "/v1/sessions", body: Data(#"{"system":"counter"}"#.utf8))
        return (try JSONSerialization.jsonObject(with: data) as? [String: Any])?["id"] as? String ?? ""
    }

    static func count(_ instance: LocalInstance, _ session: String) async throws -> Int? {
        let data = try await instance.checkedRequest("GET", "/v1/sessions/\(session)")
        let json = try JSONSerialization.jsonObject(with: data) as? [String: Any]
        return (json?["state"] as? [String: Any])?["count"] as? Int
    }

    /// Waits (at most 10 s) until the instance passivated a session for being idle.
    static func waitForPassivation(_ instance: LocalInstance) async throws {
        let deadline = ContinuousClock.now + .seconds(10)
        while ContinuousClock.now < deadline {
            let metrics = String(decoding: try await instance.checkedRequest("GET", "/metrics"), as: UTF8.self)
            let line = metrics.split(separator: "\n").first {
                $0.hasPrefix("feedbackhost_session_passivations_total") && $0.contains("idle")
            }
            if let line, let count = Double(line.split(separator: " ").last ?? ""), count >= 1 { return }
            try await Task.sleep(for: .milliseconds(50))
        }
        Issue.record("no session was passivated within 10 s")
    }

    @Test func aRepeatedNumberGetsTheFirstAnswerAndAGapIsAConflict() async throws {
        try await withLocalInstance { instance in
            let id = try await Self.counter(instance)
            let first = try await Self.post(instance, id, #"{"type":"increment"}"#, sequence: 1)
            #expect(first.status == 200)
            #expect(first.json["rev"] as? Int == 1)
            #expect((first.json["clients"] as? [String: Any])?["phone"] as? Int == 1)
            let again = try await Self.post(instance, id, #"{"type":"increment"}"#, sequence: 1)
            #expect(again.status == 200)
            #expect(again.json["rev"] as? Int == 1)
            #expect(try await Self.count(instance, id) == 1)

            let gap = try await Self.post(instance, id, #"{"type":"increment"}"#, sequence: 3)
            #expect(gap.status == 409)
            #expect(gap.json["code"] as? String == nil || gap.json["type"] as? String != nil)
            #expect(gap.json["expectedSequence"] as? Int == 2)

            let refused = try await Self.post(instance, id, #"{"type":"multiply"}"#, sequence: 2)
            #expect(refused.status == 422)
            #expect(refused.json["refusedSequence"] as? Int == 2)
            let refusedAgain = try await Self.post(instance, id, #"{"type":"increment"}"#, sequence: 2)
            #expect(refusedAgain.status == 422)
            let malformed = try await Self.post(instance, id, #"{"type":"#, sequence: 3)
            #expect(malformed.status == 400)
            #expect(malformed.json["refusedSequence"] as? Int == 3)

            let next = try await Self.post(instance, id, #"{"type":"increment"}"#, sequence: 4)
            #expect(next.status == 200)
            #expect(next.json["rev"] as? Int == 2)
            let superseded = try await Self.post(instance, id, #"{"type":"increment"}"#, sequence: 1)
            #expect(superseded.status == 409)
            #expect(try await Self.count(instance, id) == 2)

            let other = try await Self.post(instance, id, #"{"type":"increment"}"#, client: "tablet", sequence: 1)
            #expect((other.json["clients"] as? [String: Any])?["phone"] as? Int == 4)
            #expect((other.json["clients"] as? [String: Any])?["tablet"] as? Int == 1)
        }
    }

    @Test func theNumbersSurviveARestartAndAPassivation() async throws {
        try await withLocalInstance(arguments: ["--session-idle-ms", "200"]) { instance in
            let id = try await Self.counter(instance)
            #expect(try await Self.post(instance, id, #"{"type":"increment"}"#, sequence: 1).status == 200)
            _ = try await Self.post(instance, id, #"{"type":"multiply"}"#, sequence: 2)
            try await instance.restart()
            let replay = try await Self.post(instance, id, #"{"type":"increment"}"#, sequence: 1)
            #expect(replay.status == 409)  // the last number is 2 (refused): 1 is superseded
            let refused = try await Self.post(instance, id, #"{"type":"increment"}"#, sequence: 2)
            #expect(refused.status == 422)
            #expect(try await Self.post(instance, id, #"{"type":"increment"}"#, sequence: 3).status == 200)
            // Passivated after 200 ms idle: the numbers come back from the journal with the session.
            try await Self.waitForPassivation(instance)
            let again = try await Self.post(instance, id, #"{"type":"increment"}"#, sequence: 3)
            #expect(again.status == 200)
            #expect(again.json["rev"] as? Int == 2)
            #expect(try await Self.post(instance, id, #"{"type":"increment"}"#, sequence: 5).status == 409)
            #expect(try await Self.count(instance, id) == 2)
        }
    }

    /// `--session-clients-max 2`: a third client makes the session forget the least recently active one, whose next
    /// number past 1 is 409 `client-unknown` (and stays so after a restart: its journal row went), while 1 starts it
    /// afresh; the others keep their numbers.
    @Test func aSessionForgetsItsLeastRecentClientAndTheJournalToo() async throws {
        try await withLocalInstance(arguments: ["--session-clients-max", "2"]) { instance in
            let id = try await Self.counter(instance)
            let increment = #"{"type":"increment"}"#
            #expect(try await Self.post(instance, id, increment, client: "a", sequence: 1).status == 200)
            #expect(try await Self.post(instance, id, increment, client: "b", sequence: 1).status == 200)
            #expect(try await Self.post(instance, id, increment, client: "a", sequence: 2).status == 200)
            let third = try await Self.post(instance, id, increment, client: "c", sequence: 1)
            #expect(third.status == 200)
            #expect(third.json["clients"] as? [String: Int] == ["a": 2, "c": 1])

            let forgotten = try await Self.post(instance, id, increment, client: "b", sequence: 2)
            #expect(forgotten.status == 409)
            #expect((forgotten.json["type"] as? String)?.hasSuffix("client-unknown") == true)
            #expect(forgotten.json["expectedSequence"] as? Int == 1)
            #expect((forgotten.json["detail"] as? String)?.contains("session.clients.max") == true)

            try await instance.restart()
            #expect(try await Self.post(instance, id, increment, client: "b", sequence: 2).status == 409)
            #expect(try await Self.post(instance, id, increment, client: "a", sequence: 2).json["rev"] as? Int == 3)
            #expect(try await Self.post(instance, id, increment, client: "a", sequence: 3).status == 200)
            // b starts afresh: c (its last post older than a's) is forgotten now.
            let fresh = try await Self.post(instance, id, increment, client: "b", sequence: 1)
            #expect(fresh.status == 200)
            #expect(fresh.json["clients"] as? [String: Int] == ["a": 3, "b": 1])
            #expect(try await Self.post(instance, id, increment, client: "c", sequence: 2).status == 409)
            #expect(try await Self.count(instance, id) == 6)
        }
    }

    @Test func streamFramesSayWhichNumberedPostsTheyInclude() async throws {
        try await withLocalInstance { instance in
            let id = try await Self.counter(instance)
            #expect(try await Self.post(instance, id, #"{"type":"increment"}"#, client: "a", sequence: 1).status == 200)
            #expect(
                try await Self.post(instance, id, #"{"type":"add","amount":2}"#, client: "b", sequence: 1).status == 200
            )
            let curl = Process()
            let output = Pipe()
            curl.executableURL = URL(fileURLWithPath: "/usr/bin/curl")
            curl.arguments = [
                "-s", "-N", "--max-time", "1", "\(instance.url)/v1/sessions/\(id)/stream?lastEventId=x-1",
            ]
            curl.standardOutput = output
            try curl.run()
            let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            curl.waitUntilExit()
            #expect(text.contains(#""clients":{"a":1,"b":1}"#))
        }
    }
}
