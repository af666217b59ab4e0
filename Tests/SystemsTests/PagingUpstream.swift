import CurlClient
import Dispatch
import FeedbackLoop
import FeedbackService
import Foundation
import Logging
import SystemKit
import Systems
import Upstream

/// The fake paged upstream (Fixtures/paging_upstream.py) as a child process on 127.0.0.1, one per test.
///
/// Stopped by `stop()`; its stdin is a lifeline, so it also exits if the test process dies. Only `port` is shared.
final class PagingUpstream: @unchecked Sendable {
    let port: Int
    private let process: Process
    private let lifeline: FileHandle
    /// Talks to the fixture's log endpoints.
    let client = CurlFetcher()

    private init(process: Process, port: Int, lifeline: FileHandle) {
        self.process = process
        self.port = port
        self.lifeline = lifeline
    }

    /// Starts the fixture; the blocking read of its port line runs on a Dispatch queue, not on the test's thread.
    static func start() async throws -> PagingUpstream {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", scriptPath()]
        let output = Pipe()
        let input = Pipe()
        process.standardOutput = output
        process.standardInput = input
        try process.run()
        let line = await withCheckedContinuation { continuation in
            DispatchQueue.global().async {
                var bytes: [UInt8] = []
                while !bytes.contains(UInt8(ascii: "\n")) {
                    let data = output.fileHandleForReading.availableData
                    if data.isEmpty { break }
                    bytes.append(contentsOf: data)
                }
                continuation.resume(returning: String(decoding: bytes, as: UTF8.self))
            }
        }
        guard let port = Int(line.trimmingCharacters(in: .whitespacesAndNewlines)) else {
            process.terminate()
            process.waitUntilExit()
            throw UpstreamError(.other, "the paging fixture did not print its port (got \(line))")
        }
        return PagingUpstream(process: process, port: port, lifeline: input.fileHandleForWriting)
    }

    /// The search URL to configure as the upstream.
    var searchURL: String { "http://127.0.0.1:\(port)/search" }

    /// What the fixture logged for `key`, once it holds `count` `event` entries (it waits at most 20 s).
    func wait(key: String, event: String, count: Int = 1) async throws -> [[String: Any]] {
        let response = try await client.fetch(
            UpstreamRequest(url: "http://127.0.0.1:\(port)/wait?key=\(key)&event=\(event)&count=\(count)")
        )
        guard response.status == 200 else {
            throw UpstreamError(.other, "the fixture never logged \(count) \(event) for \(key): \(response.bodyText)")
        }
        return try Self.entries(response.body)
    }

    /// What the fixture logged for `key` so far.
    func log(key: String) async throws -> [[String: Any]] {
        try Self.entries(try await client.fetch(UpstreamRequest(url: "http://127.0.0.1:\(port)/log?key=\(key)")).body)
    }

    private static func entries(_ body: [UInt8]) throws -> [[String: Any]] {
        (try JSONSerialization.jsonObject(with: Data(body)) as? [[String: Any]]) ?? []
    }

    func stop() async {
        await client.shutdown()
        if process.isRunning { process.terminate() }
        let process = process
        await withCheckedContinuation { continuation in
            DispatchQueue.global().async {
                process.waitUntilExit()
                continuation.resume()
            }
        }
        try? lifeline.close()
    }

    private static func scriptPath() -> String {
        if let url = Bundle.module.url(forResource: "paging_upstream", withExtension: "py", subdirectory: "Fixtures") {
            return url.path
        }
        return URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("Fixtures/paging_upstream.py").path
    }
}

/// A paging loop against the fixture with a virtual clock for its backoffs, and a real CurlFetcher.
struct PagingHarness {
    let upstream: PagingUpstream
    let curl: CurlFetcher
    let clock = TestClock()
    let loop: Loop<PagingSystem.State, PagingSystem.Event>

    init(upstream: PagingUpstream, configure: (inout PagingConfiguration) -> Void = { _ in }) {
        self.init(upstream: upstream, from: PagingSystem.State(), configure: configure)
    }

    init(
        upstream: PagingUpstream,
        from state: PagingSystem.State,
        configure: (inout PagingConfiguration) -> Void = { _ in }
    ) {
        self.upstream = upstream
        var configuration = PagingConfiguration(
            upstream: upstream.searchURL,
            timeoutMilliseconds: 5_000,
            backoffMilliseconds: 100,
            maxBackoffMilliseconds: 400
        )
        configure(&configuration)
        curl = CurlFetcher()
        let system = PagingSystem(configuration: configuration)
        let environment = SystemEnvironment(clock: clock, upstream: curl, logger: Logger(label: "PagingTests"))
        loop = system.makeLoop(from: state, environment: environment)
    }

    /// The first state (the current one included) that satisfies `predicate`, or nil after 20 s.
    func state(where predicate: @escaping @Sendable (PagingSystem.State) -> Bool) async -> PagingSystem.State? {
        let loop = loop
        return await withTaskGroup(of: PagingSystem.State?.self) { group in
            group.addTask { await firstState(of: loop, where: predicate) }
            group.addTask {
                try? await Task.sleep(for: .seconds(20))
                return nil
            }
            let first = await group.next() ?? nil
            group.cancelAll()
            return first
        }
    }

    /// Waits for the effect's backoff sleep and lets it pass.
    func passBackoff(_ duration: Duration) async {
        await clock.waitForSleepers(count: 1)
        clock.advance(by: duration)
    }

    func stop() async {
        loop.stop()
        await curl.shutdown()
    }
}

/// Runs `body` with a fixture upstream and stops it afterwards, also when `body` throws.
func withPagingUpstream(_ body: (PagingUpstream) async throws -> Void) async throws {
    let upstream = try await PagingUpstream.start()
    do {
        try await body(upstream)
        await upstream.stop()
    } catch {
        await upstream.stop()
        throw error
    }
}
