import CSQLiteFaults
import CurlClient
import FeedbackService
import Foundation
import Logging
import Synchronization
import Testing
import Upstream

/// Acknowledged means durable under storage faults: the service built in this process journals through the fault
/// VFS (switched from the test, unreachable by clients), concurrent clients create sessions and post events while
/// write, sync and full-disk faults come and go, and after a restart every acknowledged create exists and every
/// session holds exactly the acknowledged events at their revisions. Faults are switched for this test's directory only.
@Suite(.serialized, .timeLimit(.minutes(3)))
struct JournalFaultTests {
    static let vfs = String(cString: fh_faults_vfs_name)

    /// The service on 127.0.0.1:0 with the `notes` system, journaling into `directory` (through the fault VFS when
    /// `faults`), with test writes every 5 ms while the journal fails.
    static func start(_ directory: String, faults: Bool = true) throws -> (ServiceApplication, SessionAPIClient) {
        let reader = ServiceApplication.defaultReader(
            arguments: [
                "feedback-host", "--host", "127.0.0.1", "--port", "0", "--data-dir", directory, "--journal-probe-ms",
                "5", "--stream-drain-ms", "100",
            ],
            environment: [:]
        )
        let application = try ServiceApplication.build(
            reader: reader,
            systems: [HostedSystem(NotesSystem())],
            logger: Logger(label: "fault-tests") { _ in SwiftLogNoOpLogHandler() },
            journalVFS: faults ? vfs : nil
        )
        let port = try application.start()
        return (application, SessionAPIClient(port: port))
    }

    static func stop(_ application: ServiceApplication, _ api: SessionAPIClient) async {
        await api.shutdown()
        await application.shutdown(deadline: .seconds(2))
    }

    /// The value of a Prometheus sample line (`name{labels} value`).
    static func sample(_ name: String, in text: String) -> Double? {
        for line in text.split(separator: "\n") where line.hasPrefix(name + " ") {
            return Double(line.split(separator: " ").last ?? "")
        }
        return nil
    }

    struct NeverHappened: Error, CustomStringConvertible {
        let description: String
    }

    /// Polls `condition` until it holds; gives up (throwing, with `what` and `state()`) after 20,000 polls, well inside
    /// the suite's time limit, so that a hang says where it is.
    static func until(
        _ what: String,
        state: () -> String = { "" },
        _ condition: () async throws -> Bool
    ) async throws {
        var polls = 0
        while try await !condition() {
            polls += 1
            if polls > 20_000 { throw NeverHappened(description: "never: \(what) \(state())") }
            try await Task.sleep(for: .milliseconds(2))
        }
    }

    @Test func everyAcknowledgedWriteSurvivesFaultsThatComeAndGo() async throws {
        #expect(fh_faults_register() == 0)
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("fh-faults-\(UUID())").path
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let (application, api) = try Self.start(directory)
        let ledger = AcknowledgementLedger()
        // Nothing writes to this one: it shows that reads work while the journal cannot commit.
        let quiet = try await api.create("notes")
        let clients = Task {
            await withTaskGroup(of: Void.self) { group in
                for _ in 0..<2 {
                    group.addTask { await Self.createSessions(api, ledger) }
                }
                for worker in 0..<6 {
                    group.addTask { await Self.postEvents(api, ledger, worker: worker) }
                }
            }
        }
        for fault in [FH_FAULT_WRITE, FH_FAULT_SYNC, FH_FAULT_FULL, FH_FAULT_WRITE] {
            let before = ledger.counts
            let state = { "\(ledger.counts) fault \(fault.rawValue)" }
            try await Self.until("acknowledgements before the fault", state: state) {
                ledger.counts.acknowledged >= before.acknowledged + 60
            }
            fh_faults_set(directory, fault)
            let during = ledger.counts
            try await Self.until("refusals", state: state) { ledger.counts.refused >= during.refused + 20 }
            let ready = try await api.send("GET", "/readyz")
            #expect(ready.status == 503)
            #expect(
                ready.bodyText.contains(
                    fault == FH_FAULT_FULL ? "disk holding the data directory is full" : "cannot write"
                )
            )
            // A metric names the cause.
            let metrics = try await api.send("GET", "/metrics").bodyText
            let cause = fault == FH_FAULT_FULL ? "disk_full" : "io_error"
            #expect(Self.sample(#"journal_failing{cause="\#(cause)"}"#, in: metrics) == 1)
            #expect(Self.sample("journal_healthy", in: metrics) == 0)
            // Reads keep working for a session nothing was written to.
            #expect(try await api.send("GET", "/v1/sessions/\(quiet)").status == 200)
            let acknowledgedInWindow = ledger.counts.acknowledged
            fh_faults_set(directory, FH_FAULT_NONE)
            try await Self.until("ready again", state: state) { try await api.send("GET", "/readyz").status == 200 }
            try await Self.until("acknowledgements after the fault", state: state) {
                ledger.counts.acknowledged >= acknowledgedInWindow + 30
            }
        }
        ledger.stop()
        await clients.value
        let unexpected = ledger.unexpected
        #expect(unexpected.count == 0, "unexpected answers, e.g. \(unexpected.prefix(3))")
        #expect(ledger.counts.refused >= 80)
        await Self.stop(application, api)

        let (restarted, again) = try Self.start(directory, faults: false)
        #expect(try await again.send("GET", "/v1/sessions/\(quiet)").status == 200)
        try await ledger.expectDurable(in: again)
        await Self.stop(restarted, again)
    }

    private static func createSessions(_ api: SessionAPIClient, _ ledger: AcknowledgementLedger) async {
        while !ledger.stopped && !Task.isCancelled {
            guard let answer = try? await api.send("POST", "/v1/sessions", body: #"{"system":"notes"}"#) else {
                continue
            }
            let id = jsonObject(answer.bodyText)["id"] as? String
            ledger.answered(answer.status, body: answer.bodyText) { if let id { ledger.created(id) } }
        }
    }

    private static func postEvents(
        _ api: SessionAPIClient,
        _ ledger: AcknowledgementLedger,
        worker: Int
    ) async {
        var number = 0
        while !ledger.stopped && !Task.isCancelled {
            guard let id = ledger.createdIDs.randomElement() else {
                // Never spin on the cooperative pool: wait for a creator.
                try? await Task.sleep(for: .milliseconds(1))
                continue
            }
            number += 1
            _ = try? await ledger.append("w\(worker)-\(number)", to: id, through: api)
        }
    }
}
