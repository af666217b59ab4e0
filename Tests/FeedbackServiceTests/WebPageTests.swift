import Foundation
import Testing

/// The page at `/` and its files, as HTTP resources of the real binary, and as a page in a real browser.
@Suite(.timeLimit(.minutes(1)))
struct WebPageTests {
    private static let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()

    @Test func pageFilesCarryTypeCharsetPolicyAndValidators() throws {
        let server = try RunningServer()
        defer { server.stop() }
        let expected = [
            "/": "text/html; charset=utf-8",
            "/client.js": "text/javascript; charset=utf-8",
            "/page.js": "text/javascript; charset=utf-8",
            "/page.css": "text/css; charset=utf-8",
            "/favicon.svg": "image/svg+xml; charset=utf-8",
        ]
        for (path, type) in expected {
            let answer = try curl(["\(server.base)\(path)"])
            #expect(answer.status == 200, "\(path)")
            #expect(answer.headers["content-type"] == type, "\(path)")
            #expect(answer.headers["cache-control"] == "no-cache", "\(path)")
            #expect(answer.headers["x-content-type-options"] == "nosniff", "\(path)")
            let policy = try #require(answer.headers["content-security-policy"], "\(path)")
            #expect(policy.hasPrefix("default-src 'self'; script-src 'self'; style-src 'self';"))
            #expect(!policy.contains("unsafe-inline") && !policy.contains("*"))
            let tag = try #require(answer.headers["etag"], "\(path)")
            let again = try curl(["-H", "If-None-Match: \(tag)", "\(server.base)\(path)"])
            #expect(again.status == 304, "\(path)")
            #expect(again.body.isEmpty)
        }
        let page = try curl(["\(server.base)/"])
        #expect(page.body.contains(#"<script src="/client.js" defer></script>"#))
        #expect(!page.body.contains("<script>") && !page.body.contains("style="), "no inline code the policy refuses")
    }

    @Test func gzipRepresentationHasItsOwnTagAndTheSameContent() throws {
        let server = try RunningServer()
        defer { server.stop() }
        let plain = try curl(["\(server.base)/client.js"])
        let zipped = try curl(["--compressed", "\(server.base)/client.js"])
        #expect(plain.headers["content-encoding"] == nil)
        #expect(zipped.headers["content-encoding"] == "gzip")
        #expect(zipped.headers["vary"] == "Accept-Encoding")
        #expect(zipped.body == plain.body)
        #expect(plain.body.contains("globalThis"))
        let plainTag = try #require(plain.headers["etag"])
        let zippedTag = try #require(zipped.headers["etag"])
        #expect(plainTag != zippedTag)
        // Either tag validates either representation (weak comparison, RFC 9110 §13.1.2).
        let weak = try curl(["--compressed", "-H", "If-None-Match: W/\(plainTag)", "\(server.base)/client.js"])
        #expect(weak.status == 304)
        #expect(try curl(["-H", "If-None-Match: \"other\", \(zippedTag)", "\(server.base)/client.js"]).status == 304)
        #expect(try curl(["-H", "If-None-Match: \"other\"", "\(server.base)/client.js"]).status == 200)
    }

    /// Tests/Browser/browser_test.py: headless Chromium driven by selenium against the debug binary on loopback.
    /// It starts and stops the server, chromedriver and Chromium; GNU `timeout` bounds it and leads their process
    /// group, which is swept afterwards in case anything outlived it.
    @Test func personDrivesSessionsFromThePageInHeadlessChromium() async throws {
        let screenshots = Self.packageRoot.appendingPathComponent(".build").path
        let (status, text) = try await runBrowserScript("browser_test.py", arguments: ["--screenshots", screenshots])
        #expect(status == 0, "\(text)")
        #expect(text.contains("browser test passed"), "\(text)")
    }

    /// Tests/Browser/inspector_browser_test.py: the inspector (issue 32) in headless Chromium, against the debug
    /// binary with a journal, every event kept and a manual clock: a traffic light's timers are effects in its
    /// timeline, scrubbing shows each revision's phase, a fork appears in the list of sessions (paused until resumed),
    /// a 100,000-event timeline scrolls with a few dozen rows in the page; with `--inspector off` the page hides it.
    @Test func inspectorShowsATrafficLightsTimelineRevisionsAndForksInHeadlessChromium() async throws {
        let screenshots = Self.packageRoot.appendingPathComponent(".build").path
        let (status, text) = try await runBrowserScript(
            "inspector_browser_test.py",
            arguments: ["--screenshots", screenshots]
        )
        #expect(status == 0, "\(text)")
        #expect(text.contains("inspector browser test passed"), "\(text)")
    }
}
