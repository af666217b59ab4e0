import ConformanceChecks
import Foundation
import Testing

/// The real `feedback-host` binary, started on 127.0.0.1:0 for one test and stopped (SIGTERM, then SIGKILL)
/// when `stop` is called.
final class RunningServer: @unchecked Sendable {
    let process = Process()
    let port: Int
    private let output = Pipe()
    /// The journal directory this instance made (removed by `stop`), nil when the test passed `--data-dir`.
    private let ownDataDirectory: String?

    static var binary: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent(
                ".build/debug/feedback-host"
            )
    }

    /// Starts the binary; its standard error goes to `errorLog` when given, else nowhere. Without `--data-dir`
    /// in `arguments` it journals into a fresh temporary directory, removed by `stop`. `launcher` (e.g.
    /// `["/usr/bin/prlimit", "--nofile=48:48", "--"]`) runs the binary through a program that then execs it.
    init(arguments: [String] = [], errorLog: URL? = nil, launcher: [String] = []) throws {
        process.executableURL = launcher.first.map { URL(fileURLWithPath: $0) } ?? Self.binary
        var arguments = arguments
        if arguments.contains("--data-dir") {
            ownDataDirectory = nil
        } else {
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("fh-data-\(UUID())").path
            ownDataDirectory = directory
            arguments += ["--data-dir", directory]
        }
        let prefix = launcher.isEmpty ? [] : Array(launcher.dropFirst()) + [Self.binary.path]
        process.arguments = prefix + ["--host", "127.0.0.1", "--port", "0"] + arguments
        process.standardOutput = output
        if let errorLog {
            _ = FileManager.default.createFile(atPath: errorLog.path, contents: nil)
            process.standardError = try FileHandle(forWritingTo: errorLog)
        } else {
            process.standardError = FileHandle.nullDevice
        }
        process.standardInput = FileHandle.nullDevice
        try process.run()
        // The first line on standard output names the port.
        var line: [UInt8] = []
        let handle = output.fileHandleForReading
        while line.last != UInt8(ascii: "\n") {
            let byte = handle.readData(ofLength: 1)
            guard let first = byte.first else { break }
            line.append(first)
        }
        let text = String(decoding: line, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        guard text.hasPrefix("listening on http://127.0.0.1:"), let port = Int(text.split(separator: ":").last ?? "")
        else {
            process.terminate()
            throw ServerFailure(message: "unexpected first line: \(text)")
        }
        self.port = port
    }

    struct ServerFailure: Error { let message: String }

    var base: String { "http://127.0.0.1:\(port)" }

    /// Stops the server with SIGTERM and returns its exit status; SIGKILL if it has not exited within 10 s.
    @discardableResult
    func stop() -> Int32 {
        defer { if let ownDataDirectory { try? FileManager.default.removeItem(atPath: ownDataDirectory) } }
        guard process.isRunning else { return process.terminationStatus }
        process.terminate()
        let deadline = Date().addingTimeInterval(10)
        while process.isRunning && Date() < deadline { usleep(10_000) }
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
        return process.terminationStatus
    }

    deinit {
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        if let ownDataDirectory { try? FileManager.default.removeItem(atPath: ownDataDirectory) }
    }
}

/// What `curl` saw: status, headers (lowercased names) and body.
struct CurlResult {
    var status: Int
    var headers: [String: String]
    var body: String

    var json: [String: Any] {
        (try? JSONSerialization.jsonObject(with: Data(body.utf8))) as? [String: Any] ?? [:]
    }
}

/// Runs `curl` (bounded by --max-time) and parses its `-i` output.
func curl(_ arguments: [String]) throws -> CurlResult {
    let process = Process()
    let output = Pipe()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/curl")
    process.arguments = ["-s", "-i", "--max-time", "10"] + arguments
    process.standardOutput = output
    try process.run()
    let data = output.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    let text = String(decoding: data, as: UTF8.self)
    guard let split = text.range(of: "\r\n\r\n") else { return CurlResult(status: 0, headers: [:], body: text) }
    let headLines = text[..<split.lowerBound].split(separator: "\r\n")
    let status = headLines.first.flatMap { Int($0.split(separator: " ")[1]) } ?? 0
    var headers: [String: String] = [:]
    for line in headLines.dropFirst() {
        guard let colon = line.firstIndex(of: ":") else { continue }
        headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
    }
    let body = String(text[split.upperBound...])
    AnswerWords.check(body, contentType: headers["content-type"])
    return CurlResult(status: status, headers: headers, body: body)
}

/// `curl -X POST` with a JSON body.
func postJSON(_ url: String, _ body: String, headers: [String] = []) throws -> CurlResult {
    try curl(["-X", "POST", "-H", "Content-Type: application/json", "--data-binary", body] + headers + [url])
}
