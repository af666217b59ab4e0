import CurlClient
import Foundation
import Synchronization
import Upstream

// PagingBenchmark: SESSIONS paging sessions of the release feedback-host, each paging through PAGES pages of the
// built-in demo catalog at once. Each session posts `search` (then `loadNextPage`) and polls its snapshot with
// If-None-Match every POLL_MS until the page is in; a page's latency is from the POST to the first snapshot
// that shows it. Samples the server's /proc/PID/status for threads and RSS.
//
// usage: PagingBenchmark BINARY [SESSIONS] [PAGES] [POLL_MS]

let arguments = CommandLine.arguments
guard arguments.count >= 2 else {
    print("usage: PagingBenchmark path/to/feedback-host [sessions] [pages] [poll-ms]")
    exit(2)
}
let binary = arguments[1]
let sessions = arguments.count > 2 ? Int(arguments[2]) ?? 1000 : 1000
let pages = arguments.count > 3 ? Int(arguments[3]) ?? 10 : 10
let pollMilliseconds = arguments.count > 4 ? Int(arguments[4]) ?? 10 : 10

// MARK: the server

let server = Process()
server.executableURL = URL(fileURLWithPath: binary)
server.arguments = ["--port", "0", "--data-dir", "none", "--log-level", "warning"]
let serverOut = Pipe()
server.standardOutput = serverOut
try server.run()
var firstLine: [UInt8] = []
while firstLine.last != UInt8(ascii: "\n") {
    let byte = serverOut.fileHandleForReading.readData(ofLength: 1)
    guard let value = byte.first else { break }
    firstLine.append(value)
}
let listening = String(decoding: firstLine, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
guard let portText = listening.split(separator: ":").last, let port = Int(portText) else {
    print("unexpected first line: \(listening)")
    server.terminate()
    exit(1)
}
let base = "http://127.0.0.1:\(port)"

/// Peak threads and peak RSS of the server, sampled every 20 ms from /proc.
final class Sampler: Sendable {
    let peakThreads = Atomic<Int>(0)
    let peakRSS = Atomic<Int>(0)
    let running = Atomic<Bool>(true)
    let pid: Int32

    init(pid: Int32) { self.pid = pid }

    func sampleOnce() {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8) else { return }
        for line in text.split(separator: "\n") {
            let parts = line.split(whereSeparator: { $0 == " " || $0 == "\t" })
            guard parts.count >= 2, let value = Int(parts[1]) else { continue }
            if parts[0] == "Threads:" { _ = peakThreads.max(value, ordering: .relaxed) }
            if parts[0] == "VmHWM:" { _ = peakRSS.max(value, ordering: .relaxed) }
        }
    }

    /// User + system CPU seconds the server used so far (/proc/PID/stat, 100 ticks per second).
    func cpuSeconds() -> Double {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
            let close = text.lastIndex(of: ")")
        else { return 0 }
        let fields = text[text.index(after: close)...].split(separator: " ")
        // After the command: state is field 3, utime field 14, stime field 15.
        guard fields.count > 13, let user = Double(fields[11]), let system = Double(fields[12]) else { return 0 }
        return (user + system) / 100
    }

    func start() {
        Thread.detachNewThread { [self] in
            while running.load(ordering: .relaxed) {
                sampleOnce()
                usleep(20_000)
            }
        }
    }
}

// MARK: the clients

struct Outcome: Sendable {
    var latencies: [Double] = []
    var serverErrors = 0
    var otherFailures = 0
}

/// The clients' side: one shared CurlFetcher, the server's base URL and the run's shape.
struct Clients: Sendable {
    let client: CurlFetcher
    let base: String
    let pages: Int
    let pollMilliseconds: Int
    // Each matches at least 270 items, so 10 pages of 20 exist.
    let queries = ["lamp", "otter", "kitchen", "clock", "fox", "radio", "garden", "music"]
    let json: UpstreamHeaders = ["Content-Type": "application/json"]

    func post(_ url: String, _ body: String) async throws -> UpstreamResponse {
        try await client.fetch(UpstreamRequest(method: "POST", url: url, headers: json, body: Array(body.utf8)))
    }

    func object(_ body: [UInt8]) -> [String: Any] {
        (try? JSONSerialization.jsonObject(with: Data(body))) as? [String: Any] ?? [:]
    }

    /// `status` and `pagesLoaded` of a snapshot, found in its bytes: parsing the whole state (up to 200 items) on
    /// every poll would make the client, not the server, the bottleneck.
    func progress(_ body: [UInt8]) -> (status: String, pagesLoaded: Int) {
        let text = String(decoding: body, as: UTF8.self)
        var status = ""
        if let range = text.range(of: #""status":""#) {
            status = String(text[range.upperBound...].prefix { $0 != "\"" })
        }
        var loaded = 0
        if let range = text.range(of: #""pagesLoaded":"#) {
            loaded = Int(text[range.upperBound...].prefix { $0.isNumber }) ?? 0
        }
        return (status, loaded)
    }

    func createSession() async throws -> String {
        let response = try await post("\(base)/v1/sessions", #"{"system":"paging"}"#)
        guard response.status == 201, let id = object(response.body)["id"] as? String else {
            throw UpstreamError(.other, "create answered \(response.status)")
        }
        return id
    }
    func page(session id: String, index: Int) async -> Outcome {
        var outcome = Outcome()
        let url = "\(base)/v1/sessions/\(id)"
        var etag: String?
        for number in 1...pages {
            let started = ContinuousClock.now
            let event =
                number == 1
                ? #"{"type":"search","query":"\#(queries[index % queries.count])"}"# : #"{"type":"loadNextPage"}"#
            do {
                let posted = try await post("\(url)/events", event)
                if posted.status >= 500 { outcome.serverErrors += 1 }
                guard posted.status == 200 else {
                    outcome.otherFailures += 1
                    return outcome
                }
                var arrived = false
                while !arrived {
                    var headers: UpstreamHeaders = [:]
                    if let etag { headers.add("If-None-Match", etag) }
                    let snapshot = try await client.fetch(UpstreamRequest(url: url, headers: headers))
                    if snapshot.status >= 500 { outcome.serverErrors += 1 }
                    if snapshot.status == 200 {
                        etag = snapshot.headers["ETag"]
                        let (status, loaded) = progress(snapshot.body)
                        if status == "failed" || (status == "exhausted" && loaded < number) {
                            outcome.otherFailures += 1
                            return outcome
                        }
                        arrived = loaded >= number && status != "loading"
                    }
                    if !arrived, ContinuousClock.now - started > .seconds(60) {
                        // A page that never arrives ends this session's run instead of hanging the benchmark.
                        outcome.otherFailures += 1
                        return outcome
                    }
                    if !arrived { try await Task.sleep(for: .milliseconds(pollMilliseconds)) }
                }
                let elapsed = ContinuousClock.now - started
                outcome.latencies.append(
                    Double(elapsed.components.seconds) * 1000 + Double(elapsed.components.attoseconds) / 1e15
                )
            } catch {
                outcome.otherFailures += 1
                return outcome
            }
        }
        return outcome
    }
}

let clients = Clients(
    client: CurlFetcher(
        configuration: CurlFetcher.Configuration(
            totalTimeoutMilliseconds: 60_000,
            maxConnectionsPerHost: 256,
            maxConnectionsTotal: 256,
            maxIdleConnections: 256
        )
    ),
    base: base,
    pages: pages,
    pollMilliseconds: pollMilliseconds
)

let sampler = Sampler(pid: server.processIdentifier)
sampler.start()

let ids = try await withThrowingTaskGroup(of: String.self) { group in
    for _ in 0..<sessions { group.addTask { try await clients.createSession() } }
    var ids: [String] = []
    for try await id in group { ids.append(id) }
    return ids
}
let idleThreads = sampler.peakThreads.load(ordering: .relaxed)
let begin = ContinuousClock.now
let cpuBefore = sampler.cpuSeconds()
let outcomes = await withTaskGroup(of: Outcome.self) { group in
    for (index, id) in ids.enumerated() { group.addTask { await clients.page(session: id, index: index) } }
    var all: [Outcome] = []
    for await outcome in group { all.append(outcome) }
    return all
}
let wall = ContinuousClock.now - begin
let cpuUsed = sampler.cpuSeconds() - cpuBefore
sampler.sampleOnce()
sampler.running.store(false, ordering: .relaxed)
await clients.client.shutdown()
server.terminate()
server.waitUntilExit()

let latencies = outcomes.flatMap(\.latencies).sorted()
let seconds = Double(wall.components.seconds) + Double(wall.components.attoseconds) / 1e18
func percentile(_ p: Double) -> Double {
    guard !latencies.isEmpty else { return .nan }
    return latencies[min(latencies.count - 1, Int(Double(latencies.count) * p))]
}
print(
    "PagingBenchmark: \(sessions) sessions x \(pages) pages of the demo catalog at once, polling every "
        + "\(pollMilliseconds) ms, server \(binary)"
)
print(String(format: "pages loaded      %d of %d in %.2f s", latencies.count, sessions * pages, seconds))
print(String(format: "pages/s           %.0f", Double(latencies.count) / seconds))
print(
    String(
        format: "page latency      p50 %.1f ms  p99 %.1f ms  max %.1f ms",
        percentile(0.5),
        percentile(0.99),
        latencies.last ?? .nan
    )
)
print(
    "server threads    \(idleThreads) after creating the sessions, peak \(sampler.peakThreads.load(ordering: .relaxed))"
)
print("server peak RSS   \(sampler.peakRSS.load(ordering: .relaxed) / 1024) MiB (VmHWM)")
print(
    String(
        format: "server CPU        %.1f s (%.2f ms per page, user + system)",
        cpuUsed,
        cpuUsed * 1000 / Double(max(latencies.count, 1))
    )
)
print("5xx answers       \(outcomes.map(\.serverErrors).reduce(0, +))")
print("other failures    \(outcomes.map(\.otherFailures).reduce(0, +))")
