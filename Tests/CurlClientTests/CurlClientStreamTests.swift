import CurlClient
import Foundation
import Testing
import Upstream

extension CurlClientTests {
    @Test func streamingBodyIsReadLineByLine() async throws {
        try await withFixture { server, client in
            let stream = try await client.stream(UpstreamRequest(url: server.url("/lines?n=50")))
            #expect(stream.status == 200)
            #expect(stream.headers["Content-Type"] == "text/event-stream")
            var lines: [String] = []
            for try await line in stream.lines { lines.append(line) }
            var expected: [String] = []
            for index in 0..<50 { expected += ["data: event \(index)", ""] }
            expected.append("last line without newline")
            #expect(lines == expected)
        }
    }

    @Test func slowReaderPausesTheTransferAndLosesNothing() async throws {
        let configuration = CurlFetcher.Configuration(streamBufferBytes: 64 << 10)
        try await withFixture(configuration) { server, client in
            let size = 8 << 20
            let stream = try await client.stream(UpstreamRequest(url: server.url("/big?bytes=\(size)&chunked=1")))
            // Nobody reads yet: the transfer must pause once the buffer is full.
            #expect(await eventually { await client.statistics().pausedTransfers == 1 })
            var received = 0
            for try await chunk in stream.chunks {
                #expect(chunk.allSatisfy { $0 == UInt8(ascii: "z") })
                received += chunk.count
            }
            #expect(received == size)
            #expect(await client.statistics().activeTransfers == 0)
        }
    }

    @Test func streamCancelledByItsOwnerEndsTheReader() async throws {
        try await withFixture { server, client in
            let stream = try await client.stream(UpstreamRequest(url: server.url("/endless?id=\(UUID().uuidString)")))
            var iterator = stream.chunks.makeAsyncIterator()
            #expect(try await iterator.next() != nil)
            stream.cancel()
            let error = await curlError {
                while try await iterator.next() != nil {}
            }
            // Chunks buffered before the cancel may still be read; the end is a cancellation.
            #expect(error?.code == .cancelled)
        }
    }

    @Test func noFileDescriptorIsLeftOpenAfterShutdown() async throws {
        let server = try FixtureServer.start()
        defer { server.stop() }
        // Dispatch opens some descriptors of its own the first time they are needed (a timerfd for the first timer
        // of a clock: `Task.sleep` in `eventually`, curl's timeouts) and keeps them for the process: one client
        // lifetime and one sleep first, so that they are already in `before`.
        let warmUp = CurlFetcher()
        _ = try await warmUp.fetch(UpstreamRequest(url: server.url("/json?i=warm-up")))
        await warmUp.shutdown()
        try await Task.sleep(for: .milliseconds(1))
        let before = try openFileDescriptors()
        let client = CurlFetcher(configuration: CurlFetcher.Configuration(maxConnectionsPerHost: 8))
        try await withThrowingTaskGroup(of: Void.self) { group in
            for index in 0..<40 {
                group.addTask { _ = try await client.fetch(UpstreamRequest(url: server.url("/json?i=\(index)"))) }
            }
            try await group.waitForAll()
        }
        let key = UUID().uuidString
        let cancelled = Task { try await client.fetch(UpstreamRequest(url: server.url("/endless?id=\(key)"))) }
        let state = { try await client.fetch(UpstreamRequest(url: server.url("/state?id=\(key)"))).bodyText }
        #expect(await eventually { try await state() == "streaming" })
        cancelled.cancel()
        _ = await curlError { try await cancelled.value }
        _ = await curlError { try await client.fetch(UpstreamRequest(url: "http://127.0.0.1:1/")) }
        #expect(try openFileDescriptors() > before)
        await client.shutdown()
        #expect(await client.statistics().watchedSockets == 0)
        #expect(try openFileDescriptors() == before)
    }
}
