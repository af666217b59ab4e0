import CurlClient
import Foundation
import FoundationNetworking
import Upstream

/// One measured run of one client in this process: warm-up, then `total` GETs with `concurrency` in flight.
struct ClientRun {
    var client: String
    var requests: Int
    var seconds: Double
    var peakThreads: Int
    var rssKiB: Int
    var peakRssKiB: Int
    var failures: Int

    var requestsPerSecond: Double { Double(requests) / seconds }

    var jsonLine: String {
        #"{"client":"\#(client)","requests":\#(requests),"seconds":\#(seconds),"peakThreads":\#(peakThreads),"#
            + #""rssKiB":\#(rssKiB),"peakRssKiB":\#(peakRssKiB),"failures":\#(failures)}"#
    }

    static func measure(client: String, url: String, total: Int, concurrency: Int) async -> ClientRun {
        let fetch: @Sendable () async -> Bool
        var shutdown: @Sendable () async -> Void = {}
        switch client {
        case "curl":
            CurlFetcher.initializeLibcurl()
            let curl = CurlFetcher(configuration: CurlFetcher.Configuration(maxConnectionsPerHost: concurrency))
            let request = UpstreamRequest(url: url)
            fetch = {
                guard let response = try? await curl.fetch(request) else { return false }
                return response.status == 200 && response.body.count == BenchmarkServer.body.count
            }
            shutdown = { await curl.shutdown() }
        default:
            let configuration = URLSessionConfiguration.default
            configuration.httpMaximumConnectionsPerHost = concurrency
            configuration.urlCache = nil
            let session = URLSession(configuration: configuration)
            let target = URL(string: url)!
            fetch = {
                guard let (data, response) = try? await session.data(from: target) else { return false }
                return (response as? HTTPURLResponse)?.statusCode == 200 && data.count == BenchmarkServer.body.count
            }
            shutdown = { session.finishTasksAndInvalidate() }
        }
        _ = await runBatch(total: 500, concurrency: concurrency, fetch: fetch)
        let sampler = ThreadSampler()
        sampler.start()
        let start = ContinuousClock.now
        let failures = await runBatch(total: total, concurrency: concurrency, fetch: fetch)
        let elapsed = ContinuousClock.now - start
        let peak = sampler.stop()
        let status = ProcStatus.read()
        await shutdown()
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        return ClientRun(
            client: client,
            requests: total,
            seconds: seconds,
            peakThreads: peak,
            rssKiB: status.rssKiB,
            peakRssKiB: status.peakRssKiB,
            failures: failures
        )
    }

    /// Runs `total` fetches with `concurrency` workers; returns the number that failed.
    private static func runBatch(
        total: Int,
        concurrency: Int,
        fetch: @escaping @Sendable () async -> Bool
    ) async
        -> Int
    {
        await withTaskGroup(of: Int.self) { group in
            for worker in 0..<concurrency {
                group.addTask {
                    var failures = 0
                    var index = worker
                    while index < total {
                        if await !fetch() { failures += 1 }
                        index += concurrency
                    }
                    return failures
                }
            }
            return await group.reduce(0, +)
        }
    }
}

/// Threads and memory of this process from /proc/self/status.
struct ProcStatus {
    var threads = 0
    var rssKiB = 0
    var peakRssKiB = 0

    static func read() -> ProcStatus {
        var status = ProcStatus()
        guard let text = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return status }
        for line in text.split(separator: "\n") {
            let parts = line.split(whereSeparator: { $0 == " " || $0 == "\t" })
            guard parts.count >= 2, let value = Int(parts[1]) else { continue }
            switch parts[0] {
            case "Threads:": status.threads = value
            case "VmRSS:": status.rssKiB = value
            case "VmHWM:": status.peakRssKiB = value
            default: break
            }
        }
        return status
    }
}

/// Samples the thread count every 2 ms on its own thread (which adds one thread to every figure, for both clients).
final class ThreadSampler: @unchecked Sendable {
    private let lock = NSLock()
    private var running = true
    private var peak = 0
    private let done = DispatchSemaphore(value: 0)

    func start() {
        Thread.detachNewThread { [self] in
            while true {
                let threads = ProcStatus.read().threads
                lock.lock()
                peak = max(peak, threads)
                let keepGoing = running
                lock.unlock()
                if !keepGoing { break }
                usleep(2_000)
            }
            done.signal()
        }
    }

    func stop() -> Int {
        lock.lock()
        running = false
        lock.unlock()
        done.wait()
        lock.lock()
        defer { lock.unlock() }
        return peak
    }
}
