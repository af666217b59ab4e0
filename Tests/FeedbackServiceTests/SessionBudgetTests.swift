import ConformanceChecks
import CurlClient
import FeedbackService
import Foundation
import Logging
import Systems
import Testing
import Upstream

/// The memory budget of all sessions (`sessions.max.bytes`, 507) and the per-state limit (`session.state.max.bytes`,
/// 422), against the service built in this process on 127.0.0.1:0, with and without a journal.
@Suite(.serialized, .timeLimit(.minutes(1)))
struct SessionBudgetTests {
    /// A started service with its client.
    struct Server {
        let application: ServiceApplication
        let api: SessionAPIClient

        /// Starts the service with the `notes`, `counter` and `growing` systems and `flags`, journaling into
        /// `dataDirectory` when given (else in memory only).
        static func start(_ flags: [String], dataDirectory: String? = nil) throws -> Server {
            let reader = ServiceApplication.defaultReader(
                arguments: [
                    "feedback-host", "--host", "127.0.0.1", "--port", "0", "--data-dir", dataDirectory ?? "none",
                    "--stream-drain-ms", "100",
                ] + flags,
                environment: [:]
            )
            let application = try ServiceApplication.build(
                reader: reader,
                systems: [HostedSystem(NotesSystem()), HostedSystem(CounterSystem()), HostedSystem(GrowingSystem())],
                logger: Logger(label: "budget-tests") { _ in SwiftLogNoOpLogHandler() }
            )
            let port = try application.start()
            return Server(application: application, api: SessionAPIClient(port: port))
        }

        func stop() async {
            await api.shutdown()
            await application.shutdown(deadline: .seconds(2))
        }

        /// `feedbackhost_sessions_bytes` as `/metrics` renders it.
        func bytesGauge() async throws -> Double {
            let text = try await api.send("GET", "/metrics").bodyText
            for line in text.split(separator: "\n") where line.hasPrefix("feedbackhost_sessions_bytes ") {
                return Double(line.split(separator: " ").last ?? "") ?? -1
            }
            return -1
        }

        func create(_ system: String, state: String? = nil) async throws -> UpstreamResponse {
            let body = state.map { #"{"system":"\#(system)","state":\#($0)}"# } ?? #"{"system":"\#(system)"}"#
            return try await api.send("POST", "/v1/sessions", body: body)
        }

        func post(_ id: String, _ body: String) async throws -> UpstreamResponse {
            try await api.send("POST", "/v1/sessions/\(id)/events", body: body)
        }

        func get(_ id: String) async throws -> [String: Any] {
            jsonObject(try await api.send("GET", "/v1/sessions/\(id)").bodyText)
        }

        /// Reads a `growing` session until its effect padded the state to `bytes` (bounded: 5,000 reads).
        func awaitPadding(_ id: String, _ bytes: Int) async throws {
            for _ in 0..<5000 {
                let state = try await get(id)["state"] as? [String: Any]
                if (state?["padding"] as? String)?.utf8.count == bytes { return }
                try await Task.sleep(for: .milliseconds(2))
            }
            Issue.record("the effect never padded the state to \(bytes) bytes")
        }
    }

    /// Checks a refusal's problem: its status, type, `Retry-After` and the setting its detail names.
    static func expectProblem(_ response: UpstreamResponse, _ status: Int, _ code: String, naming setting: String) {
        #expect(response.status == status)
        #expect(response.headers["Content-Type"] == "application/problem+json")
        let problem = jsonObject(response.bodyText)
        #expect(problem["type"] as? String == "urn:feedbackhost:problem:\(code)")
        #expect(problem["status"] as? Int == status)
        #expect((problem["detail"] as? String)?.contains(setting) == true, "\(response.bodyText)")
        #expect((response.headers["Retry-After"] != nil) == (status == 507))
    }

    @Test func aFullBudgetAnswers507UntilADeleteFreesBytes() async throws {
        let server = try Server.start(["--sessions-max-bytes", "65536"])
        var ids: [String] = []
        var refused: UpstreamResponse?
        for _ in 0..<200 {
            let answer = try await server.create("counter")
            guard answer.status == 201 else {
                refused = answer
                break
            }
            ids.append(jsonObject(answer.bodyText)["id"] as? String ?? "")
        }
        let full = try #require(refused, "the budget never filled")
        Self.expectProblem(full, 507, "sessions-memory-full", naming: "sessions.max.bytes")
        #expect(jsonObject(full.bodyText)["detail"] as? String ?? "" ~= "DELETE")
        #expect(!ids.isEmpty)
        let held = try await server.bytesGauge()
        #expect(held > 0 && held <= 65536)
        #expect(
            try await server.api.send("GET", "/metrics").bodyText.contains("feedbackhost_sessions_bytes_limit 65536")
        )
        let put = try await server.api.send(
            "PUT",
            "/v1/sessions/3q2-7wAAAAAAAAAAAAAAAA",
            body: #"{"system":"counter"}"#
        )
        Self.expectProblem(put, 507, "sessions-memory-full", naming: "sessions.max.bytes")
        #expect(try await server.bytesGauge() == held)

        #expect(try await server.api.send("DELETE", "/v1/sessions/\(ids.removeFirst())").status == 204)
        #expect(try await server.bytesGauge() < held)
        let again = try await server.create("counter")
        #expect(again.status == 201)
        ids.append(jsonObject(again.bodyText)["id"] as? String ?? "")
        for id in ids { _ = try await server.api.send("DELETE", "/v1/sessions/\(id)") }
        #expect(try await server.bytesGauge() == 0)
        await server.stop()
    }

    @Test func anEventThatWouldPassTheBudgetIs507AndChangesNothing() async throws {
        let server = try Server.start(["--sessions-max-bytes", "65536"])
        let id = try await server.api.create("notes")
        let grown = try await server.post(id, #"{"type":"pad","bytes":40000}"#)
        Self.expectProblem(grown, 507, "sessions-memory-full", naming: "sessions.max.bytes")
        let after = try await server.get(id)
        #expect(after["rev"] as? Int == 0)
        #expect((after["state"] as? [String: Any])?["padding"] as? String == "")
        // What fits is applied, and is the next revision.
        #expect(try await server.post(id, #"{"type":"pad","bytes":1000}"#).status == 200)
        #expect(try await server.get(id)["rev"] as? Int == 1)
        await server.stop()
    }

    @Test func anOversizedStateIsRefusedWithStateRevisionAndJournalUnchanged() async throws {
        let directory = TemporaryDataDirectory()
        defer { directory.remove() }
        let flags = ["--session-state-max-bytes", "4096"]
        let first = try Server.start(flags, dataDirectory: directory.path)
        let tooLarge = try await first.create(
            "notes",
            state: #"{"text":"","items":[],"padding":"\#(String(repeating: "p", count: 5000))"}"#
        )
        Self.expectProblem(tooLarge, 422, "state-too-large", naming: "session.state.max.bytes")

        let id = try await first.api.create("notes")
        #expect(try await first.post(id, #"{"type":"set","text":"kept"}"#).status == 200)
        // A batch whose first event fits and whose second passes the limit: all or nothing.
        let refused = try await first.post(
            id,
            #"{"events":[{"type":"append","item":"a"},{"type":"pad","bytes":5000}]}"#
        )
        Self.expectProblem(refused, 422, "state-too-large", naming: "session.state.max.bytes")
        #expect(jsonObject(refused.bodyText)["detail"] as? String ?? "" ~= "4096")
        let unchanged = try await first.get(id)
        #expect(unchanged["rev"] as? Int == 1)
        #expect((unchanged["state"] as? [String: Any])?["items"] as? [String] == [])
        let next = try await first.post(id, #"{"type":"append","item":"b"}"#)
        #expect(jsonObject(next.bodyText)["rev"] as? Int == 2)
        await first.stop()

        // The journal holds the two applied events and nothing of the refused batch.
        let second = try Server.start(flags, dataDirectory: directory.path)
        let restored = try await second.get(id)
        #expect(restored["rev"] as? Int == 2)
        let state = restored["state"] as? [String: Any]
        #expect(state?["text"] as? String == "kept")
        #expect(state?["items"] as? [String] == ["b"])
        #expect(state?["padding"] as? String == "")
        await second.stop()
    }

    @Test func anEffectGrowingStatesPastTheBudgetIsKeptAndCountedAndOnlyShrinkingIsTaken() async throws {
        let server = try Server.start(["--sessions-max-bytes", "65536"])
        let id = try await server.api.create("growing")
        // The client's event is small; the feedback's answer to it takes the sessions past the budget.
        #expect(try await server.post(id, #"{"type":"grow","bytes":40000}"#).status == 200)
        try await server.awaitPadding(id, 40000)
        #expect(try await server.bytesGauge() > 65536)
        Self.expectProblem(
            try await server.create("counter"),
            507,
            "sessions-memory-full",
            naming: "sessions.max.bytes"
        )
        let growing = try await server.post(id, #"{"type":"grow","bytes":10}"#)
        Self.expectProblem(growing, 507, "sessions-memory-full", naming: "sessions.max.bytes")
        // Shrinking is always taken, and frees the budget.
        #expect(try await server.post(id, #"{"type":"clear"}"#).status == 200)
        #expect(try await server.bytesGauge() < 65536)
        #expect(try await server.create("counter").status == 201)
        await server.stop()
    }

    @Test func anEffectGrowingAStatePastItsLimitIsKeptAndClientsMayOnlyShrinkIt() async throws {
        let server = try Server.start(["--session-state-max-bytes", "4096"])
        let id = try await server.api.create("growing")
        #expect(try await server.post(id, #"{"type":"grow","bytes":10000}"#).status == 200)
        try await server.awaitPadding(id, 10000)
        let rev = try await server.get(id)["rev"] as? Int
        let refused = try await server.post(id, #"{"type":"grow","bytes":1}"#)
        Self.expectProblem(refused, 422, "state-too-large", naming: "session.state.max.bytes")
        #expect(try await server.get(id)["rev"] as? Int == rev)
        #expect(try await server.post(id, #"{"type":"clear"}"#).status == 200)
        #expect(try await server.post(id, #"{"type":"grow","bytes":100}"#).status == 200)
        await server.stop()
    }

    @Test func theAnswersAnIdempotencyLedgerKeepsAreCounted() async throws {
        let server = try Server.start([])
        let plain = try await server.api.create("notes")
        let keyed = try await server.api.create("notes")
        let start = try await server.bytesGauge()
        let pad = #"{"type":"pad","bytes":5000}"#
        #expect(try await server.post(plain, pad).status == 200)
        let grown = try await server.bytesGauge() - start
        let answer = try await server.api.client.fetch(
            UpstreamRequest(
                method: "POST",
                url: server.api.base + "/v1/sessions/\(keyed)/events",
                headers: ["Content-Type": "application/json", "Idempotency-Key": "pad-1"],
                body: Array(pad.utf8),
                totalTimeoutMilliseconds: 10_000
            )
        )
        #expect(answer.status == 200)
        // The same state as the other session's, plus the answer the key keeps: the state's 5,000-odd bytes.
        let extra = try await server.bytesGauge() - start - 2 * grown
        #expect(extra >= 5000 && extra < 5100)
        _ = try await server.api.send("DELETE", "/v1/sessions/\(keyed)")
        _ = try await server.api.send("DELETE", "/v1/sessions/\(plain)")
        #expect(try await server.bytesGauge() == 0)
        await server.stop()
    }

    /// Nothing is in memory after a restart (sessions are activated on demand); once every session is back, the
    /// count is what it was.
    @Test func aRestartRestoresTheAccounting() async throws {
        let directory = TemporaryDataDirectory()
        defer { directory.remove() }
        let first = try Server.start([], dataDirectory: directory.path)
        var ids: [String] = []
        for bytes in [100, 2000, 30000] {
            let id = try await first.api.create("notes")
            ids.append(id)
            #expect(try await first.post(id, #"{"type":"pad","bytes":\#(bytes)}"#).status == 200)
        }
        ids.append(try await first.api.create("counter"))
        let before = try await first.bytesGauge()
        #expect(before > 2 * 32100)
        await first.stop()

        let second = try Server.start([], dataDirectory: directory.path)
        #expect(try await second.bytesGauge() == 0)
        for id in ids { #expect(try await second.api.send("GET", "/v1/sessions/\(id)").status == 200) }
        #expect(try await second.bytesGauge() == before)
        await second.stop()
    }
}

/// Whether `text` contains `part`.
private func ~= (text: String, part: String) -> Bool { text.contains(part) }
