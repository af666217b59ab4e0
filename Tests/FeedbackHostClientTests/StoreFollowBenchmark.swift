import FeedbackHostClient
import FeedbackHostTesting
import Foundation
import Observation
import Systems
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// docs/BENCHMARKS.md, "A store following a busy session": a store follows a session that another process (Python,
/// one keep-alive connection, batches of 10) posts 1,000 events/s to; how far behind the server's answers the
/// store's confirmed revision is, and the CPU this process spends per event. Runs only with
/// `CLIENT_BENCH_SECONDS=SECONDS` (it measures, it asserts nothing about speed).
@Suite(.serialized, .timeLimit(.minutes(3)))
@MainActor
struct StoreFollowBenchmark {
    nonisolated static let seconds = Int(ProcessInfo.processInfo.environment["CLIENT_BENCH_SECONDS"] ?? "") ?? 0

    static let load = """
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

    nonisolated static func cpuSeconds() -> Double {
        let usage = self.usage()
        return usage.user + usage.system
    }

    nonisolated static func usage() -> (user: Double, system: Double, switches: Int) {
        var usage = rusage()
        getrusage(RUSAGE_SELF.rawValue, &usage)
        return (
            Double(usage.ru_utime.tv_sec) + Double(usage.ru_utime.tv_usec) / 1e6,
            Double(usage.ru_stime.tv_sec) + Double(usage.ru_stime.tv_usec) / 1e6,
            usage.ru_nvcsw + usage.ru_nivcsw
        )
    }

    @Test(.enabled(if: seconds > 0)) func aStoreKeepsUpWithAThousandEventsASecond() async throws {
        try await withLocalInstance { instance in
            let store = try await instance.host.createStore(CounterSystem())
            defer { store.close() }
            try await Task.sleep(for: .milliseconds(300))  // the stream is open
            var seen: [(rev: UInt64, at: Double)] = []
            let watcher = Task { @MainActor in
                for await rev in Observations({ store.confirmed.rev }) {
                    seen.append((rev, Date().timeIntervalSince1970))
                }
            }
            let out = FileManager.default.temporaryDirectory.appendingPathComponent("fh-load-\(UUID().uuidString)")
            defer { try? FileManager.default.removeItem(at: out) }
            let python = Process()
            python.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
            python.arguments = [
                "-c", Self.load, "\(instance.port)", store.session, "\(Self.seconds)", "1000", out.path,
            ]
            let cpuBefore = Self.cpuSeconds()
            let usageBefore = Self.usage()
            try python.run()
            while python.isRunning { try await Task.sleep(for: .milliseconds(20)) }
            let answers = try String(contentsOf: out, encoding: .utf8).split(separator: "\n").compactMap { line in
                let parts = line.split(separator: " ")
                return parts.count == 2 ? (UInt64(parts[0]) ?? 0, Double(parts[1]) ?? 0) : nil
            }
            let last = answers.last?.0 ?? 0
            try await store.settle(atLeast: last, timeout: .seconds(30))
            try await Task.sleep(for: .milliseconds(50))
            let cpu = Self.cpuSeconds() - cpuBefore
            let usageAfter = Self.usage()
            print(
                "store follow: user \(usageAfter.user - usageBefore.user) s, system "
                    + "\(usageAfter.system - usageBefore.system) s, context switches "
                    + "\(usageAfter.switches - usageBefore.switches)"
            )
            watcher.cancel()
            var lags: [Double] = []
            for (rev, answered) in answers {
                guard let reached = seen.first(where: { $0.rev >= rev }) else { continue }
                lags.append(max(0, reached.at - answered) * 1000)
            }
            lags.sort()
            func percentile(_ p: Double) -> Double {
                lags.isEmpty ? .nan : lags[min(lags.count - 1, Int(p * Double(lags.count)))]
            }
            print(
                "store follow: \(last) events in \(Self.seconds) s, \(answers.count) posts; confirmed-rev lag behind "
                    + "the server's answer p50 \(percentile(0.5)) ms, p99 \(percentile(0.99)) ms, max \(lags.last ?? .nan) ms; "
                    + "\(seen.count) confirmed changes; client CPU \(cpu) s = \(cpu / Double(max(last, 1)) * 1e6) µs per event"
            )
            #expect(store.confirmed.rev == last)
        }
    }

    @Test(.enabled(if: seconds > 0)) func anIdleStoreCostsNothing() async throws {
        try await withLocalInstance { instance in
            let before = Self.usage()
            try await Task.sleep(for: .seconds(2))
            let middle = Self.usage()
            let store = try await instance.host.createStore(CounterSystem())
            defer { store.close() }
            try await Task.sleep(for: .seconds(2))
            let after = Self.usage()
            print(
                "idle: without a store user \(middle.user - before.user) s system \(middle.system - before.system) s "
                    + "switches \(middle.switches - before.switches); with one user \(after.user - middle.user) s "
                    + "system \(after.system - middle.system) s switches \(after.switches - middle.switches)"
            )
        }
    }
}
