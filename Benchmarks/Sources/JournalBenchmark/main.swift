import Dispatch
import Foundation
import Logging
import SessionJournal
import Synchronization

// SessionJournal benchmarks.
//   JournalBenchmark appends WRITERS SECONDS POLICY   appends/s through group commit; each writer appends one
//                                                     event, waits for its completion, appends the next
//   JournalBenchmark recovery SESSIONS                open + recover time for SESSIONS sessions with a few events
//   JournalBenchmark populate DIRECTORY SESSIONS [settled]  writes those sessions (counter) for a feedback-host
// POLICY is per-commit or interval:MS. The journal lives in a fresh directory under /tmp, removed afterwards.

let logger = Logger(label: "journal-bench") { _ in SwiftLogNoOpLogHandler() }

func temporaryDirectory() -> String {
    var template = Array((NSTemporaryDirectory() + "/journal-bench-XXXXXX").utf8CString)
    return template.withUnsafeMutableBufferPointer { String(cString: mkdtemp($0.baseAddress!)!) }
}

func sessionID(_ number: Int) -> String {
    let digits = String(number)
    // 22 base64url characters whose last one carries no stray bits, as the service checks.
    return String(repeating: "A", count: 21 - digits.count) + digits + "A"
}

func creation(_ id: String) -> SessionCreation {
    SessionCreation(id: id, system: "counter", epoch: 42, state: #"{"count":0,"pending":null}"#, createdAt: 1.7e9)
}

/// One writer: appends, and on completion appends its next event until the deadline.
final class Writer: Sendable {
    let id: String
    let journal: Journal
    let deadline: DispatchTime
    let count = Atomic<Int>(0)
    let done: DispatchGroup

    init(id: String, journal: Journal, deadline: DispatchTime, done: DispatchGroup) {
        self.id = id
        self.journal = journal
        self.deadline = deadline
        self.done = done
    }

    func next() {
        let revision = UInt64(count.load(ordering: .relaxed) + 1)
        let event = #"{"type":"increment","by":1,"at":\#(revision)}"#
        journal.append([.event(sessionID: id, revision: revision, event: event, origin: .client)]) { result in
            guard case .success = result else { fatalError("append failed: \(result)") }
            self.count.add(1, ordering: .relaxed)
            if DispatchTime.now() < self.deadline {
                self.next()
            } else {
                self.done.leave()
            }
        }
    }
}

func appends(writers: Int, seconds: Double, policy: FsyncPolicy) throws {
    let directory = temporaryDirectory()
    defer { try? FileManager.default.removeItem(atPath: directory) }
    let journal = try Journal.open(
        directory: directory,
        configuration: JournalConfiguration(fsync: policy),
        logger: logger
    )
    let ids = (0..<writers).map(sessionID)
    let ready = DispatchSemaphore(value: 0)
    journal.append(ids.map { .created(creation($0)) }) { _ in ready.signal() }
    ready.wait()
    let before = journal.statistics
    let done = DispatchGroup()
    let start = DispatchTime.now()
    let deadline = start + .milliseconds(Int(seconds * 1000))
    let all = ids.map { Writer(id: $0, journal: journal, deadline: deadline, done: done) }
    for writer in all {
        done.enter()
        writer.next()
    }
    done.wait()
    let elapsed = Double(DispatchTime.now().uptimeNanoseconds - start.uptimeNanoseconds) / 1e9
    let after = journal.statistics
    let total = all.reduce(0) { $0 + $1.count.load(ordering: .relaxed) }
    let commits = after.commits - before.commits
    print(
        String(
            format:
                "appends policy=%@ writers=%d: %.0f appends/s, %d commits (%.1f appends/commit, %.0f µs/commit), %d syncs",
            policy.description,
            writers,
            Double(total) / elapsed,
            commits,
            Double(total) / Double(max(commits, 1)),
            elapsed * 1e6 / Double(max(commits, 1)),
            after.syncs - before.syncs
        )
    )
    journal.close()
}

/// Writes `sessions` counter sessions into a journal in `directory`: each created, events 1...5, a snapshot at 3
/// (events 1...3 deleted), so 2 events to replay. A feedback-host started on the directory restores them.
/// Each session: creation, 5 events, a snapshot at 3; with `settled`, also a snapshot at 5 marked settled there (what
/// a passivation, or a graceful shutdown, leaves).
func populate(directory: String, sessions: Int, settled: Bool = false) throws {
    let writer = try Journal.open(
        directory: directory,
        configuration: JournalConfiguration(fsync: .interval(milliseconds: 1000)),
        logger: logger
    )
    let batch = 1000
    for first in stride(from: 0, to: sessions, by: batch) {
        var records: [JournalRecord] = []
        for number in first..<min(first + batch, sessions) {
            let id = sessionID(number)
            records.append(.created(creation(id)))
            for revision in UInt64(1)...5 {
                records.append(
                    .event(sessionID: id, revision: revision, event: #"{"type":"increment","by":1}"#, origin: .client)
                )
                if revision == 3 {
                    records.append(.snapshot(sessionID: id, revision: 3, state: #"{"count":3,"pending":null}"#))
                }
            }
            if settled {
                records.append(.snapshot(sessionID: id, revision: 5, state: #"{"count":5,"pending":null}"#))
                records.append(.settled(sessionID: id, revision: 5))
            }
        }
        let done = DispatchSemaphore(value: 0)
        writer.append(records) { _ in done.signal() }
        done.wait()
    }
    // The steady state: background compaction has deleted the events the snapshots cover.
    _ = try writer.compact()
    writer.close()
}

func recovery(sessions: Int) throws {
    let directory = temporaryDirectory()
    defer { try? FileManager.default.removeItem(atPath: directory) }
    try populate(directory: directory, sessions: sessions)
    let bytes = (try? FileManager.default.attributesOfItem(atPath: directory + "/journal.sqlite")[.size] as? Int) ?? 0
    for check in [true, false] {
        let start = DispatchTime.now()
        let journal = try Journal.open(
            directory: directory,
            configuration: JournalConfiguration(checkOnOpen: check),
            logger: logger
        )
        let opened = DispatchTime.now()
        let recovered = try journal.recover()
        let end = DispatchTime.now()
        let events = recovered.sessions.reduce(0) { $0 + $1.events.count }
        print(
            String(
                format:
                    "recovery sessions=%d events=%d file=%.1f MB quick_check=%@: open %.2f s, recover %.2f s, total %.2f s",
                recovered.sessions.count,
                events,
                Double(bytes) / 1e6,
                check ? "on" : "off",
                Double(opened.uptimeNanoseconds - start.uptimeNanoseconds) / 1e9,
                Double(end.uptimeNanoseconds - opened.uptimeNanoseconds) / 1e9,
                Double(end.uptimeNanoseconds - start.uptimeNanoseconds) / 1e9
            )
        )
        journal.close()
    }
}

let arguments = CommandLine.arguments
switch arguments.dropFirst().first {
case "appends":
    let writers = arguments.count > 2 ? Int(arguments[2]) ?? 64 : 64
    let seconds = arguments.count > 3 ? Double(arguments[3]) ?? 5 : 5
    let policy = arguments.count > 4 ? FsyncPolicy(parsing: arguments[4]) ?? .perCommit : .perCommit
    try appends(writers: writers, seconds: seconds, policy: policy)
case "populate":
    guard arguments.count > 3, let sessions = Int(arguments[3]) else {
        fatalError("populate DIRECTORY SESSIONS [settled]")
    }
    try populate(directory: arguments[2], sessions: sessions, settled: arguments.count > 4 && arguments[4] == "settled")
case "recovery":
    try recovery(sessions: arguments.count > 2 ? Int(arguments[2]) ?? 100_000 : 100_000)
default:
    print("usage: JournalBenchmark appends WRITERS SECONDS per-commit|interval:MS | recovery SESSIONS")
}
