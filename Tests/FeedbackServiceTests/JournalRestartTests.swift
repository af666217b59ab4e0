import Foundation
import Logging
import SessionJournal
import Testing

@testable import FeedbackService

/// Durable sessions against the real `feedback-host` binary: restarts, SIGKILL under load, schema changes.
@Suite(.serialized, .timeLimit(.minutes(1)))
struct JournalRestartTests {
    private static func createCounter(_ server: RunningServer) throws -> (id: String, cursor: String) {
        let created = try postJSON("\(server.base)/v1/sessions", #"{"system":"counter"}"#)
        #expect(created.status == 201)
        return (created.json["id"] as? String ?? "", created.json["cursor"] as? String ?? "")
    }

    private static func epoch(_ cursor: String) -> String { String(cursor.split(separator: "-").first ?? "") }

    /// Writes `records` to `journal` in one group commit and closes it, as a server that stopped.
    private static func write(_ records: [JournalRecord], to journal: Journal) {
        let done = DispatchSemaphore(value: 0)
        journal.append(records) { _ in done.signal() }
        done.wait()
        journal.close()
    }

    /// Opens the journal in `directory` as the server would.
    private static func openJournal(_ directory: TemporaryDataDirectory) throws -> Journal {
        try Journal.open(directory: directory.path, logger: .init(label: "test"))
    }

    @Test func sessionsSurviveARestartWithTheirIdEpochAndRevision() throws {
        let directory = TemporaryDataDirectory()
        defer { directory.remove() }
        let first = try RunningServer(arguments: ["--data-dir", directory.path])
        let (id, _) = try Self.createCounter(first)
        var last = CurlResult(status: 0, headers: [:], body: "")
        for _ in 0..<3 {
            last = try postJSON("\(first.base)/v1/sessions/\(id)/events", #"{"type":"increment"}"#)
        }
        #expect(last.status == 200)
        let cursor = try #require(last.json["cursor"] as? String)
        #expect(first.stop() == 0)

        let second = try RunningServer(arguments: ["--data-dir", directory.path])
        defer { second.stop() }
        let restored = try curl(["\(second.base)/v1/sessions/\(id)"])
        #expect(restored.status == 200)
        #expect(restored.json["cursor"] as? String == cursor)
        #expect((restored.json["state"] as? [String: Any])?["count"] as? Int == 3)
        let next = try postJSON("\(second.base)/v1/sessions/\(id)/events", #"{"type":"increment"}"#)
        #expect(next.json["rev"] as? Int == 4)
        #expect(Self.epoch(next.json["cursor"] as? String ?? "") == Self.epoch(cursor))
    }

    @Test func deletedSessionStaysDeletedAfterARestart() throws {
        let directory = TemporaryDataDirectory()
        defer { directory.remove() }
        let first = try RunningServer(arguments: ["--data-dir", directory.path])
        let (gone, _) = try Self.createCounter(first)
        let (kept, _) = try Self.createCounter(first)
        #expect(try curl(["-X", "DELETE", "\(first.base)/v1/sessions/\(gone)"]).status == 204)
        first.stop()

        let second = try RunningServer(arguments: ["--data-dir", directory.path])
        defer { second.stop() }
        #expect(try curl(["\(second.base)/v1/sessions/\(gone)"]).status == 404)
        #expect(try curl(["\(second.base)/v1/sessions/\(kept)"]).status == 200)
    }

    @Test func sessionRestoredFromPeriodicSnapshotsKeepsItsState() throws {
        let directory = TemporaryDataDirectory()
        defer { directory.remove() }
        let arguments = ["--data-dir", directory.path, "--journal-snapshot-interval", "2"]
        let first = try RunningServer(arguments: arguments)
        let (id, _) = try Self.createCounter(first)
        for amount in 1...5 {
            _ = try postJSON("\(first.base)/v1/sessions/\(id)/events", #"{"type":"add","amount":\#(amount)}"#)
        }
        first.stop()

        let second = try RunningServer(arguments: arguments)
        defer { second.stop() }
        let restored = try curl(["\(second.base)/v1/sessions/\(id)"])
        #expect(restored.json["rev"] as? Int == 5)
        #expect((restored.json["state"] as? [String: Any])?["count"] as? Int == 15)
    }

    /// The effect a state asks for runs again after a crash: the machine holds the ball when the server is
    /// killed, and throws it back after the restart; the effect's event is journaled like a client's.
    @Test func effectPendingAtACrashRunsAfterTheRestart() throws {
        let directory = TemporaryDataDirectory()
        defer { directory.remove() }
        let first = try RunningServer(arguments: ["--data-dir", directory.path])
        let created = try postJSON("\(first.base)/v1/sessions", #"{"system":"catch"}"#)
        let id = try #require(created.json["id"] as? String)
        let thrown = try postJSON("\(first.base)/v1/sessions/\(id)/events", #"{"type":"throwToMachine"}"#)
        #expect(thrown.json["rev"] as? Int == 1)
        kill(first.process.processIdentifier, SIGKILL)  // well before the machine's 1 s throw-back
        first.process.waitUntilExit()

        let second = try RunningServer(arguments: ["--data-dir", directory.path])
        let restored = try curl(["\(second.base)/v1/sessions/\(id)"])
        #expect((restored.json["state"] as? [String: Any])?["holder"] as? String == "machine")
        var holder = "machine"
        let deadline = Date().addingTimeInterval(20)
        while holder == "machine" && Date() < deadline {
            usleep(50_000)
            let answer = try curl(["\(second.base)/v1/sessions/\(id)"])
            holder = (answer.json["state"] as? [String: Any])?["holder"] as? String ?? "?"
        }
        #expect(holder == "human")
        second.stop()

        let third = try RunningServer(arguments: ["--data-dir", directory.path])
        defer { third.stop() }
        let after = try curl(["\(third.base)/v1/sessions/\(id)"])
        // The throw (1), the throw-back's deadline (`schedule`, 2; journaled before or after the crash) and the
        // throw-back (3).
        #expect(after.json["rev"] as? Int == 3)
        #expect((after.json["state"] as? [String: Any])?["holder"] as? String == "human")
    }

    /// Posts from 4 sessions × 2 connections, SIGKILL after a random number of acknowledged posts, restart on the
    /// same data directory, three times: every acknowledged revision is restored, and revisions continue.
    @Test func everyAcknowledgedEventSurvivesSIGKILL() throws {
        let directory = TemporaryDataDirectory()
        defer { directory.remove() }
        var ids: [String] = []
        var epochs: [String: String] = [:]
        var acknowledged: [String: Int] = [:]
        for round in 0..<3 {
            let server = try RunningServer(arguments: ["--data-dir", directory.path])
            defer { server.stop() }
            if round == 0 {
                for _ in 0..<4 {
                    let (id, cursor) = try Self.createCounter(server)
                    ids.append(id)
                    epochs[id] = Self.epoch(cursor)
                    acknowledged[id] = 0
                }
            }
            // Everything acknowledged before the last kill is there, with the same epoch.
            for id in ids {
                let restored = try curl(["\(server.base)/v1/sessions/\(id)"])
                #expect(restored.status == 200)
                let rev = restored.json["rev"] as? Int ?? -1
                #expect(rev >= acknowledged[id]!, "session \(id) lost acknowledged events")
                #expect((restored.json["state"] as? [String: Any])?["count"] as? Int == rev)
                #expect(Self.epoch(restored.json["cursor"] as? String ?? "") == epochs[id])
                acknowledged[id] = rev
            }
            let restored = acknowledged
            let killAfter = Int.random(in: 20...300)
            let acks = try LoadWhileKilling.run(server: server, ids: ids, killAfter: killAfter)
            #expect(acks.count >= killAfter)
            for (id, rev) in acks {
                // Revisions continue after the restored ones.
                #expect(rev > restored[id]!)
                acknowledged[id] = max(acknowledged[id]!, rev)
            }
        }
        let last = try RunningServer(arguments: ["--data-dir", directory.path])
        defer { last.stop() }
        for id in ids {
            let restored = try curl(["\(last.base)/v1/sessions/\(id)"])
            #expect((restored.json["rev"] as? Int ?? -1) >= acknowledged[id]!)
        }
    }

    /// The answer to a keyed POST is lost with the process (SIGKILL after the events were durable); the client
    /// retries with the same key after the restart and gets the first answer, and nothing applies twice.
    @Test func idempotencyKeySurvivesSIGKILLAndARestart() throws {
        let directory = TemporaryDataDirectory()
        defer { directory.remove() }
        let first = try RunningServer(arguments: ["--data-dir", directory.path])
        let (id, _) = try Self.createCounter(first)
        let events = "/v1/sessions/\(id)/events"
        let batch = #"{"events":[{"type":"add","amount":5},{"type":"increment"}]}"#
        let keyA = ["-H", "Idempotency-Key: batch-a"]
        let keyB = ["-H", "Idempotency-Key: single-b"]
        let answerA = try postJSON(first.base + events, batch, headers: keyA)
        let answerB = try postJSON(first.base + events, #"{"type":"increment"}"#, headers: keyB)
        #expect(answerA.status == 200 && answerB.status == 200)
        #expect(answerB.json["rev"] as? Int == 3)
        kill(first.process.processIdentifier, SIGKILL)
        first.process.waitUntilExit()

        let second = try RunningServer(arguments: ["--data-dir", directory.path])
        let retryA = try postJSON(second.base + events, batch, headers: keyA)
        let retryB = try postJSON(second.base + events, #"{"type":"increment"}"#, headers: keyB)
        #expect(retryA.status == 200 && retryA.body == answerA.body)
        #expect(retryB.status == 200 && retryB.body == answerB.body)
        let state = try curl(["\(second.base)/v1/sessions/\(id)"])
        #expect(state.json["rev"] as? Int == 3)
        #expect((state.json["state"] as? [String: Any])?["count"] as? Int == 7)
        let other = try postJSON(second.base + events, #"{"type":"add","amount":6}"#, headers: keyA)
        #expect(other.status == 422)
        #expect(other.json["type"] as? String == "urn:feedbackhost:problem:idempotency-key-reused")
        let keyC = ["-H", "Idempotency-Key: after-restart"]
        let answerC = try postJSON(second.base + events, #"{"type":"increment"}"#, headers: keyC)
        #expect(answerC.json["rev"] as? Int == 4)
        #expect(second.stop() == 0)

        // A clean restart, whose start compacts the journal, keeps the keys too.
        let third = try RunningServer(arguments: ["--data-dir", directory.path])
        defer { third.stop() }
        #expect(try postJSON(third.base + events, batch, headers: keyA).body == answerA.body)
        #expect(try postJSON(third.base + events, #"{"type":"increment"}"#, headers: keyC).body == answerC.body)
        #expect(try curl(["\(third.base)/v1/sessions/\(id)"]).json["rev"] as? Int == 4)
        // The keys of a deleted session go with it: the same id made again, even after a restart, starts with none.
        #expect(try curl(["-X", "DELETE", "\(third.base)/v1/sessions/\(id)"]).status == 204)
        #expect(third.stop() == 0)
        let fourth = try RunningServer(arguments: ["--data-dir", directory.path])
        defer { fourth.stop() }
        let remade = try curl([
            "-X", "PUT", "-H", "Content-Type: application/json", "--data-binary", #"{"system":"counter"}"#,
            "\(fourth.base)/v1/sessions/\(id)",
        ])
        #expect(remade.status == 201)
        let fresh = try postJSON(fourth.base + events, batch, headers: keyA)
        #expect(fresh.status == 200 && fresh.json["rev"] as? Int == 2)
    }

    /// A session restored short of its last events (a gap in the log) keeps the answers its state still holds,
    /// across later restarts too; an answer whose events were lost is dropped, so its retry applies.
    @Test func damagedSessionKeepsTheAnswersItsStateHolds() throws {
        let directory = TemporaryDataDirectory()
        defer { directory.remove() }
        let id = "DamagedDamagedDamagedA"
        let body = #"{"type":"increment"}"#
        let journal = try Self.openJournal(directory)
        let fingerprint = KeyedFingerprints(key: journal.fingerprintKey).fingerprint(Array(body.utf8))
        func answer(_ key: String, _ revision: UInt64) -> JournalRecord {
            .answered(
                KeyedAnswer(
                    sessionID: id,
                    key: key,
                    fingerprint: fingerprint,
                    epoch: 5,
                    revision: revision,
                    state: #"{"count":\#(revision)}"#
                )
            )
        }
        Self.write(
            [
                .created(SessionCreation(id: id, system: "counter", epoch: 5, state: #"{"count":0}"#, createdAt: 0)),
                .event(sessionID: id, revision: 1, event: EventText(body), origin: .client), answer("held", 1),
                .event(sessionID: id, revision: 3, event: EventText(body), origin: .client), answer("lost", 3),
            ],
            to: journal
        )

        let events = "/v1/sessions/\(id)/events"
        for round in 0..<2 {
            let server = try RunningServer(arguments: ["--data-dir", directory.path])
            defer { server.stop() }
            let held = try postJSON(server.base + events, body, headers: ["-H", "Idempotency-Key: held"])
            #expect(held.status == 200)
            #expect(held.json["rev"] as? Int == 1)
            #expect(held.json["cursor"] as? String == "5-1")
            if round == 0 {
                let lost = try postJSON(server.base + events, body, headers: ["-H", "Idempotency-Key: lost"])
                #expect(lost.json["rev"] as? Int == 2)
            }
            #expect(try curl(["\(server.base)/v1/sessions/\(id)"]).json["rev"] as? Int == 2)
        }
    }

    @Test func journalMetricsAreOnMetrics() throws {
        let directory = TemporaryDataDirectory()
        defer { directory.remove() }
        let broken = "BrokenBrokenBrokenBroA"
        let healthy = "HealthyHealthyHealthyA"
        let journal = try Self.openJournal(directory)
        Self.write(
            [
                .created(SessionCreation(id: broken, system: "gone", epoch: 5, state: "{}", createdAt: 0)),
                .created(
                    SessionCreation(id: healthy, system: "counter", epoch: 6, state: #"{"count":0}"#, createdAt: 0)
                ),
            ],
            to: journal
        )

        let server = try RunningServer(arguments: ["--data-dir", directory.path])
        defer { server.stop() }
        // Nothing is read back at start: both sessions are passive until asked for.
        let started = try Self.metrics(server)
        #expect(started["feedbackhost_sessions"] == 0)
        #expect(started["feedbackhost_sessions_passive"] == 2)
        #expect(started["feedbackhost_sessions_broken"] == 0)
        let posted = try postJSON("\(server.base)/v1/sessions/\(healthy)/events", #"{"type":"increment"}"#)
        #expect(posted.status == 200)
        #expect(try curl(["\(server.base)/v1/sessions/\(broken)"]).status == 500)
        let before = try Self.metrics(server)
        #expect(before["feedbackhost_sessions"] == 1)
        #expect(before["feedbackhost_sessions_passive"] == 0)
        #expect(before[#"feedbackhost_session_activations_total{reason="request"}"#] == 1)
        #expect(before["feedbackhost_sessions_broken"] == 1)
        #expect(before[#"journal_compactions_total{kind="full"}"#] == 1)
        #expect((before[#"journal_commits_total{outcome="committed"}"#] ?? 0) >= 1)
        #expect(before[#"journal_commits_total{outcome="failed"}"#] == 0)
        #expect((before["journal_records_total"] ?? 0) >= 1)
        #expect((before["journal_batch_records_count"] ?? 0) >= 1)
        #expect((before["journal_batch_appends_count"] ?? 0) >= 1)
        #expect((before["journal_commit_duration_seconds_count"] ?? 0) >= 1)
        #expect((before["journal_fsyncs_total"] ?? 0) >= 1)
        #expect((before["journal_bytes"] ?? 0) > 0)
        #expect(try curl(["-X", "DELETE", "\(server.base)/v1/sessions/\(broken)"]).status == 204)
        #expect(try Self.metrics(server)["feedbackhost_sessions_broken"] == 0)
    }

    /// `/metrics` as sample name (with its labels) to value.
    private static func metrics(_ server: RunningServer) throws -> [String: Double] {
        let text = try curl(["\(server.base)/metrics"]).body
        var samples: [String: Double] = [:]
        for line in text.split(separator: "\n") where !line.hasPrefix("#") {
            guard let space = line.lastIndex(of: " "), let value = Double(line[line.index(after: space)...]) else {
                continue
            }
            samples[String(line[..<space])] = value
        }
        return samples
    }

    @Test func eventThatNoLongerDecodesMarksTheSessionBroken() throws {
        let directory = TemporaryDataDirectory()
        defer { directory.remove() }
        let broken = "BrokenBrokenBrokenBroA"
        let healthy = "HealthyHealthyHealthyA"
        let journal = try Self.openJournal(directory)
        Self.write(
            [
                .created(
                    SessionCreation(id: broken, system: "counter", epoch: 5, state: #"{"count":0}"#, createdAt: 0)
                ),
                .event(sessionID: broken, revision: 1, event: #"{"type":"increment"}"#, origin: .client),
                .event(sessionID: broken, revision: 2, event: #"{"type":"explode"}"#, origin: .client),
                .created(
                    SessionCreation(id: healthy, system: "counter", epoch: 6, state: #"{"count":0}"#, createdAt: 0)
                ),
            ],
            to: journal
        )

        let log = FileManager.default.temporaryDirectory.appendingPathComponent("feedback-host-\(UUID()).log")
        defer { try? FileManager.default.removeItem(at: log) }
        let server = try RunningServer(arguments: ["--data-dir", directory.path], errorLog: log)
        defer { server.stop() }
        let answer = try curl(["\(server.base)/v1/sessions/\(broken)"])
        #expect(answer.status == 500)
        #expect(answer.json["type"] as? String == "urn:feedbackhost:problem:session-schema-unreadable")
        #expect((answer.json["detail"] as? String)?.contains("event 2") == true)
        #expect(answer.json["session"] as? String == broken)
        #expect(answer.json["schemaVersion"] as? Int == 1)
        #expect(try curl(["\(server.base)/v1/sessions/\(healthy)"]).status == 200)
        let posted = try postJSON("\(server.base)/v1/sessions/\(broken)/events", #"{"type":"increment"}"#)
        #expect(posted.status == 500)
        #expect(try String(contentsOf: log, encoding: .utf8).contains("could not be restored"))
        #expect(try curl(["-X", "DELETE", "\(server.base)/v1/sessions/\(broken)"]).status == 204)
        #expect(try curl(["\(server.base)/v1/sessions/\(broken)"]).status == 404)
    }
}

/// A directory for one test's journal, removed by `remove()`.
struct TemporaryDataDirectory {
    let path = FileManager.default.temporaryDirectory.appendingPathComponent("fh-journal-\(UUID())").path

    func remove() { try? FileManager.default.removeItem(atPath: path) }

    /// The flags of a server with this data directory and `--auth jwt` whose own tokens are signed with a key file
    /// made here (creating sessions open to anyone).
    func authFlags() throws -> [String] {
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        let key = URL(fileURLWithPath: path).appendingPathComponent("server.key")
        try Data("the-server-key-of-this-test-32-bytes-at-least".utf8).write(to: key)
        return ["--data-dir", path, "--auth", "jwt", "--auth-create", "open", "--auth-key-file", key.path]
    }
}

/// Python posts `{"type":"increment"}` on two keep-alive connections per session and prints `id rev` for every
/// 200 it has read in full; after `killAfter` such lines the server gets SIGKILL. Returns every acknowledgement.
enum LoadWhileKilling {
    static let script = """
        import http.client, json, sys, threading
        port, ids = int(sys.argv[1]), sys.argv[2:]
        lock = threading.Lock()
        def post(sid):
            try:
                connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
                while True:
                    connection.request("POST", "/v1/sessions/%s/events" % sid, body='{"type":"increment"}',
                                       headers={"Content-Type": "application/json"})
                    response = connection.getresponse()
                    body = response.read()
                    if response.status != 200:
                        with lock:
                            print("status %d %s" % (response.status, body.decode()), flush=True)
                        return
                    with lock:
                        print("%s %d" % (sid, json.loads(body)["rev"]), flush=True)
            except Exception:
                return
        threads = [threading.Thread(target=post, args=(sid,)) for sid in ids for _ in range(2)]
        for thread in threads: thread.start()
        for thread in threads: thread.join()
        """

    static func run(server: RunningServer, ids: [String], killAfter: Int) throws -> [(String, Int)] {
        let process = Process()
        let output = Pipe()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["timeout", "30", "python3", "-c", script, String(server.port)] + ids
        process.standardOutput = output
        try process.run()
        defer { process.waitUntilExit() }
        var acks: [(String, Int)] = []
        var buffer: [UInt8] = []
        var killed = false
        let handle = output.fileHandleForReading
        while true {
            let chunk = handle.availableData
            if chunk.isEmpty { break }  // end of file: every poster has stopped
            buffer.append(contentsOf: chunk)
            while let newline = buffer.firstIndex(of: UInt8(ascii: "\n")) {
                let line = String(decoding: buffer[..<newline], as: UTF8.self)
                buffer.removeSubrange(...newline)
                let parts = line.split(separator: " ")
                #expect(parts.first != "status", "a post failed before the kill: \(line)")
                if parts.count == 2, let rev = Int(parts[1]) { acks.append((String(parts[0]), rev)) }
            }
            if !killed && acks.count >= killAfter {
                kill(server.process.processIdentifier, SIGKILL)
                server.process.waitUntilExit()
                killed = true
            }
        }
        if !killed {
            kill(server.process.processIdentifier, SIGKILL)
            server.process.waitUntilExit()
        }
        return acks
    }
}
