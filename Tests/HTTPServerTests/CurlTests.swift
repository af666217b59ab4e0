import Foundation
import HTTPServer
import Testing

/// Runs `curl` with arguments and returns its standard output; curl's own timeout bounds the run.
private func curl(_ arguments: [String]) throws -> (status: Int32, output: String) {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/curl")
    process.arguments = ["--silent", "--show-error", "--max-time", "10"] + arguments
    let pipe = Pipe()
    process.standardOutput = pipe
    try process.run()
    let data = pipe.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return (process.terminationStatus, String(decoding: data, as: UTF8.self))
}

@Suite(.timeLimit(.minutes(1))) struct CurlTests {
    private func router() -> Router {
        var router = testRouter()
        router.get("/ticks") { _ in
            Response.eventStream { stream in
                for i in 1...3 { stream.writeEvent(ServerSentEvent(id: "\(i)", data: "tick \(i)")) }
                stream.finish()
            }
        }
        return router
    }

    @Test func servesCurlOverKeepAliveWithCompressionAndBodies() async throws {
        try await withServer(router: router()) { port in
            let base = "http://127.0.0.1:\(port)"
            let (health, post, big, expect, old) = try await offPool {
                (
                    try curl(["\(base)/healthz", "\(base)/healthz"]),
                    try curl(["-H", "Content-Type: application/json", "--data", #"{"kind":"tap"}"#, "\(base)/echo"]),
                    try curl(["--compressed", "\(base)/big"]),
                    try curl(["-H", "Expect: 100-continue", "--data", "continued", "\(base)/echo"]),
                    try curl(["--http1.0", "\(base)/v1/sessions/old/events/1"])
                )
            }
            #expect(health.status == 0)
            #expect(health.output == #"{"status":"ok"}{"status":"ok"}"#)
            #expect(post.output == #"{"kind":"tap"}"#)
            #expect(big.output == String(repeating: "feedback ", count: 1000))
            #expect(expect.output == "continued")
            #expect(old.output == "old 1")
        }
    }

    @Test func streamsServerSentEventsToCurlCompressedOrNot() async throws {
        try await withServer(router: router()) { port in
            let url = "http://127.0.0.1:\(port)/ticks"
            let (plain, compressed) = try await offPool {
                (try curl(["-N", url]), try curl(["-N", "--compressed", url]))
            }
            let expected = "id: 1\ndata: tick 1\n\nid: 2\ndata: tick 2\n\nid: 3\ndata: tick 3\n\n"
            #expect(plain.output == expected)
            #expect(compressed.output == expected)
        }
    }
}
