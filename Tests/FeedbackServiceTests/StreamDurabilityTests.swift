import CSQLiteFaults
import FeedbackService
import Foundation
import Testing
import Upstream

/// A stream shows a state only once the journal holds it, with SQLite as with PostgreSQL: a state the journal never
/// holds (its commit failed; or the process died before it) is one the session will reach again with another state
/// at the same revision, and a client resuming from that revision would take a patch against the wrong base.
@Suite(.serialized, .timeLimit(.minutes(1)))
struct StreamDurabilityTests {
    /// Everything the stream sends until it has been quiet for `quiet` (or closed).
    private func drain(_ stream: SSEReader, quiet: Duration = .milliseconds(500)) async throws -> [SSEItem] {
        var items: [SSEItem] = []
        while true {
            do {
                let item = try await stream.next(timeout: quiet)
                items.append(item)
                if item == .closed { return items }
            } catch is SSEReader.Timeout {
                return items
            }
        }
    }

    @Test func aStateWhoseCommitFailedNeverReachesAStream() async throws {
        #expect(fh_faults_register() == 0)
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("fh-stream-\(UUID())").path
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let (application, api) = try JournalFaultTests.start(directory)
        let port = try #require(Int(api.base.split(separator: ":").last ?? ""))
        let id = try await api.create("notes")
        let kept = try await api.send("POST", "/v1/sessions/\(id)/events", body: #"{"type":"set","text":"kept"}"#)
        #expect(kept.status == 200)

        let stream = try SSEReader(port: port, path: "/v1/sessions/\(id)/stream")
        let first = try await stream.nextEvent()
        #expect(first.type == "snapshot")
        #expect(first.data.contains(#""text":"kept""#))

        // The next commit's sync fails: the post is refused, and its state must not have been streamed meanwhile
        // (before, with SQLite, the frame left at the reduce, before the commit).
        fh_faults_set(directory, FH_FAULT_SYNC)
        let lost = try await api.send("POST", "/v1/sessions/\(id)/events", body: #"{"type":"set","text":"lost"}"#)
        #expect(lost.status == 503, "\(lost.bodyText)")
        let meanwhile = try await drain(stream)
        for case .event(let type, let data, _) in meanwhile {
            #expect(!data.contains("lost"), "the stream showed a state the journal never held: \(type) \(data)")
        }

        // Healthy again: the session is re-anchored from the journal, and what it shows from then on is its history.
        fh_faults_set(directory, FH_FAULT_NONE)
        try await JournalFaultTests.until("ready again") { try await api.send("GET", "/readyz").status == 200 }
        try await JournalFaultTests.until("a post taken again") {
            try await api.send("POST", "/v1/sessions/\(id)/events", body: #"{"type":"append","item":"after"}"#)
                .status == 200
        }
        let again = try SSEReader(port: port, path: "/v1/sessions/\(id)/stream")
        let snapshot = try await again.nextEvent()
        #expect(snapshot.type == "snapshot")
        #expect(snapshot.data.contains(#""text":"kept""#) && snapshot.data.contains("after"), "\(snapshot.data)")
        #expect(!snapshot.data.contains("lost"))
        await stream.disconnect()
        await again.disconnect()
        await JournalFaultTests.stop(application, api)
    }
}
