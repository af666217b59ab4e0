import Testing

/// Tests/Browser/auth_browser_test.py: client.js with `--auth jwt` in headless Chromium (tokens from creation, a
/// token function asked again at `reauth`, a tokenless stream ending as unauthorized), against the debug binary.
@Suite(.timeLimit(.minutes(2)))
struct AuthBrowserTests {
    @Test func clientJSRenewsItsTokenAtReauthInHeadlessChromium() async throws {
        let (status, text) = try await runBrowserScript("auth_browser_test.py")
        #expect(status == 0, "\(text)")
        #expect(text.contains("auth browser test passed"), "\(text)")
    }
}
