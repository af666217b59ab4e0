import CurlClient
import Foundation
import Upstream

/// The Python fixture upstream (Fixtures/fixture_server.py) running as a child process on 127.0.0.1.
///
/// Started per test and stopped by `stop()` (terminate, then wait). Not shared between tasks except to read `port`.
final class FixtureServer: @unchecked Sendable {
    let port: Int
    private let process: Process
    /// Our end of the child's stdin: the fixture exits when it closes, even if this process dies.
    private let lifeline: FileHandle

    private init(process: Process, port: Int, lifeline: FileHandle) {
        self.process = process
        self.port = port
        self.lifeline = lifeline
    }

    static func start() throws -> FixtureServer {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", scriptPath()]
        let output = Pipe()
        process.standardOutput = output
        let input = Pipe()
        process.standardInput = input
        try process.run()
        let reader = output.fileHandleForReading
        var line: [UInt8] = []
        while !line.contains(UInt8(ascii: "\n")) {
            let data = reader.availableData
            if data.isEmpty { break }
            line.append(contentsOf: data)
        }
        try reader.close()
        let text = String(decoding: line, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        guard let port = Int(text) else {
            process.terminate()
            process.waitUntilExit()
            try? input.fileHandleForWriting.close()
            throw UpstreamError(.other, "The fixture server did not print its port (got \(text)).")
        }
        return FixtureServer(process: process, port: port, lifeline: input.fileHandleForWriting)
    }

    func url(_ path: String) -> String {
        "http://127.0.0.1:\(port)\(path)"
    }

    func stop() {
        if process.isRunning { process.terminate() }
        process.waitUntilExit()
        try? lifeline.close()
    }

    private static func scriptPath() -> String {
        if let url = Bundle.module.url(forResource: "fixture_server", withExtension: "py", subdirectory: "Fixtures") {
            return url.path
        }
        return URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("Fixtures/fixture_server.py").path
    }
}

/// Starts a fixture server and a client, runs `body`, then shuts both down, also when `body` throws.
func withFixture<T>(
    _ configuration: CurlFetcher.Configuration = CurlFetcher.Configuration(),
    _ body: (FixtureServer, CurlFetcher) async throws -> T
) async throws -> T {
    let server = try FixtureServer.start()
    let client = CurlFetcher(configuration: configuration)
    do {
        let result = try await body(server, client)
        await client.shutdown()
        server.stop()
        return result
    } catch {
        await client.shutdown()
        server.stop()
        throw error
    }
}

/// Polls `condition` every 10 ms until it holds or `attempts` run out; returns whether it held.
/// Only for outcomes that another process reports (the fixture), never to assert a duration.
/// A condition that throws counts as not holding yet.
func eventually(attempts: Int = 500, _ condition: () async throws -> Bool) async -> Bool {
    for _ in 0..<attempts {
        if (try? await condition()) == true { return true }
        try? await Task.sleep(for: .milliseconds(10))
    }
    return false
}

/// Catches the `UpstreamError` an operation throws, or nil when it succeeds.
func curlError<T>(_ operation: () async throws -> T) async -> UpstreamError? {
    do {
        _ = try await operation()
        return nil
    } catch let error as UpstreamError {
        return error
    } catch {
        return UpstreamError(.other, "unexpected error type: \(error)")
    }
}

/// The number of open file descriptors of this process.
func openFileDescriptors() throws -> Int {
    try FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd").count
}
