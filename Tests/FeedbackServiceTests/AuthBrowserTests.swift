import Dispatch
import Foundation
import Testing

/// Tests/Browser/auth_browser_test.py: client.js with `--auth jwt` in headless Chromium (tokens from creation, a
/// token function asked again at `reauth`, a tokenless stream ending as unauthorized), against the debug binary.
@Suite(.timeLimit(.minutes(2)))
struct AuthBrowserTests {
    private static let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()

    @Test func clientJSRenewsItsTokenAtReauthInHeadlessChromium() async throws {
        let process = Process()
        let output = Pipe()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/timeout")
        process.arguments = [
            "-k", "5", "50", "python3",
            Self.packageRoot.appendingPathComponent("Tests/Browser/auth_browser_test.py").path,
            "--binary", RunningServer.binary.path,
        ]
        process.standardOutput = output
        process.standardError = output
        process.standardInput = FileHandle.nullDevice
        try process.run()
        // Read and wait on a Dispatch thread, not a cooperative one (the run takes seconds).
        let data = await withCheckedContinuation { (done: CheckedContinuation<Data, Never>) in
            DispatchQueue.global().async {
                let data = output.fileHandleForReading.readDataToEndOfFile()
                process.waitUntilExit()
                done.resume(returning: data)
            }
        }
        kill(-process.processIdentifier, SIGKILL)
        let text = String(decoding: data, as: UTF8.self)
        #expect(process.terminationStatus == 0, "\(text)")
        #expect(text.contains("auth browser test passed"), "\(text)")
    }
}
