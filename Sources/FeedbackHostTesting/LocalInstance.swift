public import Foundation
import Synchronization

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A `feedback-host` process for integration tests: started on a free port of 127.0.0.1 with a private data
/// directory and `--clock manual`, stopped by its process id.
///
/// ```swift
/// let instance = try await LocalInstance.start()       // extra flags: LocalInstance.start(arguments: [...])
/// defer { instance.stop() }
/// try await instance.advance(by: .milliseconds(4000))  // answers once the timers due fired and were reduced
/// ```
///
/// The binary is the one in `FEEDBACKHOST_BINARY`, else `feedback-host` on `PATH`, else the package's own build.
/// The instance's standard output and error go to a log file in its private directory: `log` reads it, every
/// `LocalInstanceError` ends with its last lines, `withLocalInstance` prints it when its body throws, and `stop()`
/// prints it when `FEEDBACKHOST_SHOW_LOG` is set.
///
/// Concurrency: the process and its state are behind one `Mutex`; every method may be called from any thread or task.
/// `stop()` blocks the caller for at most the shutdown's 10 s (then SIGKILL).
public final class LocalInstance: Sendable {
    /// `http://127.0.0.1:PORT`, the same across `restart()`.
    public let url: URL
    /// The port the instance listens on.
    public let port: Int
    /// The private directory: `data/` (the journal, `--data-dir`) and `instance.log`; removed by `stop()`.
    public let directory: URL
    /// The binary that runs.
    public let binary: URL
    /// The flags given to `start` (after the ones the instance chooses).
    public let arguments: [String]

    private let process: Mutex<Process?>
    private let keepsDirectory: Bool

    /// The journal directory given as `--data-dir`.
    public var dataDirectory: URL { directory.appendingPathComponent("data") }
    /// The file standard output and standard error of the process go to.
    public var logFile: URL { directory.appendingPathComponent("instance.log") }

    /// The process id of the running instance, nil once stopped.
    public var processIdentifier: Int32? {
        process.withLock { process in
            guard let process, process.isRunning else { return nil }
            return process.processIdentifier
        }
    }

    /// Starts `feedback-host --host 127.0.0.1 --port 0 --data-dir DIR --clock manual --stream-drain-ms 0` plus
    /// `arguments` (a flag given there replaces the instance's own: `--clock skip`, `--data-dir none`), and returns
    /// once it listens (at most `timeout`).
    public static func start(
        arguments: [String] = [],
        environment: [String: String] = [:],
        timeout: Duration = .seconds(60)
    ) async throws -> LocalInstance {
        let binary = try BinaryLocator.locate()
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "feedbackhost-instance-\(UUID().uuidString)"
        )
        try FileManager.default.createDirectory(
            at: directory.appendingPathComponent("data"),
            withIntermediateDirectories: true
        )
        let launched: Launched
        do {
            launched = try await launch(
                binary: binary,
                directory: directory,
                port: 0,
                arguments: arguments,
                environment: environment,
                timeout: timeout
            )
        } catch {
            // The error carries the log's tail; the directory goes.
            try? FileManager.default.removeItem(at: directory)
            throw error
        }
        return LocalInstance(
            binary: binary,
            directory: directory,
            port: launched.port,
            arguments: arguments,
            process: launched.process
        )
    }

    private init(binary: URL, directory: URL, port: Int, arguments: [String], process: Process) {
        self.binary = binary
        self.directory = directory
        self.port = port
        self.arguments = arguments
        self.url = URL(string: "http://127.0.0.1:\(port)")!
        self.process = Mutex(process)
        self.keepsDirectory = ProcessInfo.processInfo.environment["FEEDBACKHOST_KEEP_INSTANCE"] != nil
    }

    /// Stops the process (SIGTERM by its id, SIGKILL after 10 s) and removes the private directory. Idempotent.
    public func stop() {
        terminate()
        if ProcessInfo.processInfo.environment["FEEDBACKHOST_SHOW_LOG"] != nil {
            print("feedback-host log (\(url)):\n\(log)")
        }
        if !keepsDirectory { try? FileManager.default.removeItem(at: directory) }
    }

    /// Stops the process gracefully and starts it again on the same port and data directory: the sessions come
    /// back from the journal, as after a deploy.
    public func restart(timeout: Duration = .seconds(60)) async throws {
        terminate()
        let launched = try await Self.launch(
            binary: binary,
            directory: directory,
            port: port,
            arguments: arguments,
            environment: [:],
            timeout: timeout
        )
        process.withLock { $0 = launched.process }
    }

    /// Kills the process at once (SIGKILL), as a crash would; `restart()` brings it back.
    public func kill() {
        process.withLock { process in
            guard let process, process.isRunning else { return }
            _ = Foundation.kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
    }

    /// Everything the instance wrote so far.
    public var log: String {
        (try? String(contentsOf: logFile, encoding: .utf8)) ?? ""
    }

    /// The last `count` lines of the log.
    public func logTail(lines count: Int = 40) -> String {
        log.split(separator: "\n", omittingEmptySubsequences: false).suffix(count).joined(separator: "\n")
    }

    private func terminate() {
        process.withLock { process in
            guard let running = process else { return }
            if running.isRunning {
                _ = Foundation.kill(running.processIdentifier, SIGTERM)
                let deadline = ContinuousClock.now + .seconds(10)
                while running.isRunning && ContinuousClock.now < deadline { usleep(5_000) }
                if running.isRunning { _ = Foundation.kill(running.processIdentifier, SIGKILL) }
                running.waitUntilExit()
            }
            process = nil
        }
    }

    deinit {
        process.withLock { process in
            if let process, process.isRunning {
                _ = Foundation.kill(process.processIdentifier, SIGKILL)
                process.waitUntilExit()
            }
        }
    }
}

extension LocalInstance {
    private struct Launched: @unchecked Sendable {
        let process: Process
        let port: Int
    }

    /// Runs the binary with its output appended to the log and waits (polling, bounded) for its first line,
    /// `listening on http://127.0.0.1:PORT`.
    private static func launch(
        binary: URL,
        directory: URL,
        port: Int,
        arguments: [String],
        environment: [String: String],
        timeout: Duration
    ) async throws -> Launched {
        let logFile = directory.appendingPathComponent("instance.log")
        let portFile = directory.appendingPathComponent("stdout-\(UUID().uuidString)")
        if !FileManager.default.fileExists(atPath: logFile.path) {
            _ = FileManager.default.createFile(atPath: logFile.path, contents: nil)
        }
        _ = FileManager.default.createFile(atPath: portFile.path, contents: nil)
        defer { try? FileManager.default.removeItem(at: portFile) }
        let log = try FileHandle(forWritingTo: logFile)
        log.seekToEndOfFile()
        let output = try FileHandle(forWritingTo: portFile)
        defer {
            try? log.close()
            try? output.close()
        }
        let process = Process()
        process.executableURL = binary
        // The instance's own choices, each left out when the test's arguments give the flag (a flag given twice
        // is not "the last wins" for the server).
        let defaults: [(String, String)] = [
            ("--host", "127.0.0.1"), ("--port", "\(port)"),
            ("--data-dir", directory.appendingPathComponent("data").path), ("--clock", "manual"),
            // A test's stop should not wait for open streams to be closed gradually.
            ("--stream-drain-ms", "0"),
        ]
        let given = Set(arguments.map { $0.split(separator: "=", maxSplits: 1).first.map(String.init) ?? $0 })
        process.arguments = defaults.filter { !given.contains($0.0) }.flatMap { [$0.0, $0.1] } + arguments
        var variables = ProcessInfo.processInfo.environment
        // The instance's own variables are not the server's: it refuses FEEDBACKHOST_ variables it does not know.
        for name in ["FEEDBACKHOST_BINARY", "FEEDBACKHOST_SHOW_LOG", "FEEDBACKHOST_KEEP_INSTANCE"] {
            variables[name] = nil
        }
        for (name, value) in environment { variables[name] = value }
        process.environment = variables
        process.standardOutput = output
        process.standardError = log
        process.standardInput = FileHandle.nullDevice
        try process.run()

        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            let text = (try? String(contentsOf: portFile, encoding: .utf8)) ?? ""
            if let line = text.split(separator: "\n").first, text.contains("\n") {
                if line.hasPrefix("listening on http://"), let port = Int(line.split(separator: ":").last ?? "") {
                    return Launched(process: process, port: port)
                }
                break
            }
            if !process.isRunning { break }
            try await Task.sleep(for: .milliseconds(10))
        }
        if process.isRunning {
            _ = Foundation.kill(process.processIdentifier, SIGKILL)
        }
        process.waitUntilExit()
        let written = (try? String(contentsOf: portFile, encoding: .utf8)) ?? ""
        throw LocalInstanceError(
            .startFailed,
            "\(binary.path) did not start (exit status \(process.terminationStatus)); standard output: "
                + "\(written.isEmpty ? "(nothing)" : written)\n"
                + tail(of: (try? String(contentsOf: logFile, encoding: .utf8)) ?? "")
        )
    }

    static func tail(of log: String, lines count: Int = 40) -> String {
        "--- the instance's log, last \(count) lines ---\n"
            + log.split(separator: "\n", omittingEmptySubsequences: false).suffix(count).joined(separator: "\n")
    }
}

/// Starts a `LocalInstance`, runs `body` with it and stops it; when `body` throws, the instance's log is printed
/// before the error is rethrown, so the test's output says what the server did.
public func withLocalInstance<Result>(
    arguments: [String] = [],
    isolation: isolated (any Actor)? = #isolation,
    _ body: (LocalInstance) async throws -> Result
) async throws -> Result {
    let instance = try await LocalInstance.start(arguments: arguments)
    defer { instance.stop() }
    do {
        return try await body(instance)
    } catch {
        print("feedback-host log (\(instance.url)), after: \(error)\n\(instance.logTail(lines: 200))")
        throw error
    }
}
