import FeedbackHostClient
import FeedbackHostTesting
import Foundation
import Observation
import Systems

#if canImport(Glibc)
import Glibc
#endif

// docs/BENCHMARKS.md, "A store following a busy session": a `RemoteStore<CounterSystem>` follows a session of a
// `LocalInstance` while another process (Python, one keep-alive connection, batches of 10) posts RATE events/s to it
// for SECONDS. For each post answer (its revision and wall time, written by the load process) the lag is the time
// until the store's `confirmed.rev` reached that revision (seen through `Observations`; 0 when the stream was first).
// Client CPU is this process's user + system time over the run, divided by the events; the server is another process.
//
//     swift build -c release --product StoreFollow && $(swift build -c release --show-bin-path)/StoreFollow [SECONDS] [RATE] [IDLE_SECONDS]
//
// FEEDBACKHOST_BINARY names the server (else the package's own build, as LocalInstance finds it).

let arguments = CommandLine.arguments.dropFirst().compactMap { Int($0) }
let seconds = arguments.first ?? 10
let rate = arguments.dropFirst().first ?? 1000
let idleSeconds = arguments.dropFirst(2).first ?? 2

let load = """
    import http.client, json, sys, time
    port, session, seconds, rate, out = int(sys.argv[1]), sys.argv[2], float(sys.argv[3]), float(sys.argv[4]), sys.argv[5]
    per_post = 10
    conn = http.client.HTTPConnection("127.0.0.1", port)
    body = json.dumps({"events": [{"type": "increment"}] * per_post})
    start = time.monotonic(); due = start
    with open(out, "w") as f:
        while time.monotonic() < start + seconds:
            conn.request("POST", f"/v1/sessions/{session}/events", body, {"Content-Type": "application/json"})
            answer = json.loads(conn.getresponse().read())
            f.write(f"{answer['rev']} {time.time()}\\n")
            due += per_post / rate
            wait = due - time.monotonic()
            if wait > 0: time.sleep(wait)
    """

struct Usage {
    var user: Double
    var system: Double
    var switches: Int

    static func now() -> Usage {
        var usage = rusage()
        #if canImport(Glibc)
        getrusage(RUSAGE_SELF.rawValue, &usage)
        #else
        getrusage(RUSAGE_SELF, &usage)
        #endif
        return Usage(
            user: Double(usage.ru_utime.tv_sec) + Double(usage.ru_utime.tv_usec) / 1e6,
            system: Double(usage.ru_stime.tv_sec) + Double(usage.ru_stime.tv_usec) / 1e6,
            switches: usage.ru_nvcsw + usage.ru_nivcsw
        )
    }

    static func - (after: Usage, before: Usage) -> Usage {
        Usage(
            user: after.user - before.user,
            system: after.system - before.system,
            switches: after.switches - before.switches
        )
    }

    var cpu: Double { user + system }
}

func percentile(_ sorted: [Double], _ p: Double) -> Double {
    sorted.isEmpty ? .nan : sorted[min(sorted.count - 1, Int(p * Double(sorted.count)))]
}

func format(_ value: Double, _ digits: Int = 1) -> String { String(format: "%.\(digits)f", value) }

let instance = try await LocalInstance.start()
defer { instance.stop() }

// An idle open stream: what following a session that says nothing costs.
let idleStore = try await instance.host.createStore(CounterSystem())
try await Task.sleep(for: .milliseconds(500))
let idleBefore = Usage.now()
try await Task.sleep(for: .seconds(idleSeconds))
let idle = Usage.now() - idleBefore
idleStore.close()
print(
    "idle store: \(format(idle.cpu * 1000)) ms CPU in \(idleSeconds) s (\(format(idle.cpu / Double(idleSeconds) * 100, 2)) % "
        + "of a core), \(idle.switches) context switches"
)

let store = try await instance.host.createStore(CounterSystem())
defer { store.close() }
try await Task.sleep(for: .milliseconds(300))  // the stream is open
var seen: [(rev: UInt64, at: Double)] = []
seen.reserveCapacity(seconds * rate)
let watcher = Task { @MainActor in
    for await rev in Observations({ store.confirmed.rev }) {
        seen.append((rev, Date().timeIntervalSince1970))
    }
}
let out = FileManager.default.temporaryDirectory.appendingPathComponent("fh-load-\(UUID().uuidString)")
defer { try? FileManager.default.removeItem(at: out) }
let python = Process()
python.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
python.arguments = ["-c", load, "\(instance.port)", store.session, "\(seconds)", "\(rate)", out.path]
let before = Usage.now()
try python.run()
while python.isRunning { try await Task.sleep(for: .milliseconds(20)) }
let answers = try String(contentsOf: out, encoding: .utf8).split(separator: "\n").compactMap { line in
    let parts = line.split(separator: " ")
    return parts.count == 2 ? (rev: UInt64(parts[0]) ?? 0, at: Double(parts[1]) ?? 0) : nil
}
let last = answers.last?.rev ?? 0
try await store.settle(atLeast: last, timeout: .seconds(30))
try await Task.sleep(for: .milliseconds(50))
let used = Usage.now() - before
watcher.cancel()

var lags: [Double] = []
var next = 0
for answer in answers {
    while next < seen.count && seen[next].rev < answer.rev { next += 1 }
    guard next < seen.count else { break }
    lags.append(max(0, seen[next].at - answer.at) * 1000)
}
lags.sort()
print(
    "store follow: \(last) events in \(seconds) s (\(answers.count) posts of 10); confirmed-rev lag behind the "
        + "server's answer p50 \(format(percentile(lags, 0.5))) ms, p99 \(format(percentile(lags, 0.99))) ms, max "
        + "\(format(lags.last ?? .nan)) ms; \(seen.count) confirmed changes"
)
print(
    "client CPU: \(format(used.cpu, 3)) s (user \(format(used.user, 3)), system \(format(used.system, 3))) = "
        + "\(format(used.cpu / Double(max(last, 1)) * 1e6)) µs per event; \(used.switches) context switches"
)
if store.confirmed.rev != last { print("NOT CAUGHT UP: confirmed rev \(store.confirmed.rev), server \(last)") }
