import CurlClient
import FeedbackService
import Foundation
import Testing
import Upstream

/// The data directory's own faults: a second server on it, and a disk that fills up (a 2 MiB tmpfs, which only
/// root can mount; elsewhere the fault VFS's full disk in `JournalFaultTests` stands in).
@Suite(.serialized, .timeLimit(.minutes(2)))
struct DataDirectoryTests {
    @Test func secondServerOnAHeldDataDirectoryExitsNamingTheFirst() throws {
        let directory = TemporaryDataDirectory()
        defer { directory.remove() }
        let first = try RunningServer(arguments: ["--data-dir", directory.path])
        defer { first.stop() }
        let created = try postJSON("\(first.base)/v1/sessions", #"{"system":"counter"}"#)
        #expect(created.status == 201)

        let second = Process()
        let errors = Pipe()
        second.executableURL = RunningServer.binary
        second.arguments = ["--host", "127.0.0.1", "--port", "0", "--data-dir", directory.path]
        second.standardOutput = FileHandle.nullDevice
        second.standardError = errors
        second.standardInput = FileHandle.nullDevice
        try second.run()
        defer { if second.isRunning { kill(second.processIdentifier, SIGKILL) } }
        let message = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        second.waitUntilExit()
        #expect(second.terminationStatus != 0)
        #expect(message.contains("in use by another feedback-host (pid \(first.process.processIdentifier))"))

        // The first keeps serving, and writing.
        let id = try #require(created.json["id"] as? String)
        let posted = try postJSON("\(first.base)/v1/sessions/\(id)/events", #"{"type":"increment"}"#)
        #expect(posted.status == 200 && posted.json["rev"] as? Int == 1)
    }

    /// Whether this process may mount a tmpfs (root, with the capability).
    static let canMount: Bool = {
        guard getuid() == 0 else { return false }
        let probe = TemporaryDataDirectory()
        defer { probe.remove() }
        try? FileManager.default.createDirectory(atPath: probe.path, withIntermediateDirectories: true)
        guard run("/bin/mount", ["-t", "tmpfs", "-o", "size=1m", "tmpfs", probe.path]) == 0 else { return false }
        _ = run("/bin/umount", [probe.path])
        return true
    }()

    @discardableResult
    static func run(_ tool: String, _ arguments: [String]) -> Int32 {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: tool)
        process.arguments = arguments
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        guard (try? process.run()) != nil else { return -1 }
        process.waitUntilExit()
        return process.terminationStatus
    }

    @Test(.enabled(if: canMount)) func fullDiskRefusesWritesKeepsReadsAndLosesNothingAcknowledged() async throws {
        let directory = TemporaryDataDirectory()
        try FileManager.default.createDirectory(atPath: directory.path, withIntermediateDirectories: true)
        #expect(Self.run("/bin/mount", ["-t", "tmpfs", "-o", "size=2m", "tmpfs", directory.path]) == 0)
        defer {
            Self.run("/bin/umount", [directory.path])
            directory.remove()
        }
        let (application, api) = try JournalFaultTests.start(directory.path, faults: false)
        let ledger = AcknowledgementLedger()
        for _ in 0..<4 { ledger.created(try await api.create("notes")) }
        let filler = String(repeating: "x", count: 4000)
        var number = 0
        var refusals: [Int] = []
        while refusals.count < 10 && number < 5000 {
            number += 1
            let id = ledger.createdIDs[number % 4]
            let status = try await ledger.append("\(number)-\(filler)", to: id, through: api)
            if status != 200 { refusals.append(status) }
        }
        #expect(refusals.contains(507))
        #expect(ledger.unexpected.isEmpty)
        let ready = try await api.send("GET", "/readyz")
        #expect(ready.status == 503)
        let create = try await api.send("POST", "/v1/sessions", body: #"{"system":"notes"}"#)
        #expect(create.status == 507 || create.status == 503)
        #expect(create.headers["content-type"] == "application/problem+json")
        #expect(create.headers["retry-after"] != nil)

        // More room: the server resumes by itself.
        #expect(Self.run("/bin/mount", ["-o", "remount,size=16m", directory.path]) == 0)
        try await JournalFaultTests.until("ready again") { try await api.send("GET", "/readyz").status == 200 }
        let resumed = ledger.counts.acknowledged
        while ledger.counts.acknowledged < resumed + 8 {
            number += 1
            let id = ledger.createdIDs[number % 4]
            try await ledger.append("\(number)-after", to: id, through: api)
        }
        await JournalFaultTests.stop(application, api)

        let (restarted, again) = try JournalFaultTests.start(directory.path, faults: false)
        try await ledger.expectDurable(in: again)
        await JournalFaultTests.stop(restarted, again)
    }
}
