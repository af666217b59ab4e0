import Dispatch
import Foundation

/// A Python script of Tests/Browser (headless Chromium driven by selenium against the debug binary on loopback),
/// run under GNU `timeout`, which bounds it and leads its process group (swept afterwards in case anything outlived
/// it). Returns its exit status and everything it printed.
func runBrowserScript(_ name: String, arguments: [String] = []) async throws -> (status: Int32, output: String) {
    let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()
    let process = Process()
    let output = Pipe()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/timeout")
    process.arguments =
        [
            "-k", "5", "50", "python3", root.appendingPathComponent("Tests/Browser/\(name)").path,
            "--binary", RunningServer.binary.path,
        ] + arguments
    process.standardOutput = output
    process.standardError = output
    process.standardInput = FileHandle.nullDevice
    try process.run()
    // Read and wait on a Dispatch thread: a browser run takes seconds, and a cooperative thread blocked that long
    // would starve other suites' async tests.
    let data = await withCheckedContinuation { (done: CheckedContinuation<Data, Never>) in
        DispatchQueue.global().async {
            let data = output.fileHandleForReading.readDataToEndOfFile()
            process.waitUntilExit()
            done.resume(returning: data)
        }
    }
    kill(-process.processIdentifier, SIGKILL)
    return (process.terminationStatus, String(decoding: data, as: UTF8.self))
}
