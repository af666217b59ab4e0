import CurlClient
import Foundation
import Testing
import Upstream

extension CurlClientTests {
    @Test func stalledBodyTimesOut() async throws {
        try await withFixture(CurlFetcher.Configuration(totalTimeoutMilliseconds: 300)) { server, client in
            let error = await curlError { try await client.fetch(UpstreamRequest(url: server.url("/stall"))) }
            #expect(error?.code == .timedOut)
            #expect(error?.message.contains("/stall") == true)
        }
    }

    @Test func stalledStreamTimesOutOnTheLowSpeedLimit() async throws {
        let configuration = CurlFetcher.Configuration(lowSpeedBytesPerSecond: 1, lowSpeedTimeSeconds: 1)
        try await withFixture(configuration) { server, client in
            let stream = try await client.stream(UpstreamRequest(url: server.url("/stall")))
            #expect(stream.status == 200)
            let error = await curlError {
                var received = 0
                for try await chunk in stream.chunks { received += chunk.count }
                return received
            }
            #expect(error?.code == .timedOut)
        }
    }

    @Test func cancellationInTheMiddleOfABodyClosesTheConnection() async throws {
        try await withFixture { server, client in
            let key = UUID().uuidString
            let fetch = Task { try await client.fetch(UpstreamRequest(url: server.url("/endless?id=\(key)"))) }
            let state = { try await client.fetch(UpstreamRequest(url: server.url("/state?id=\(key)"))).bodyText }
            #expect(await eventually { try await state() == "streaming" })
            fetch.cancel()
            let error = await curlError { try await fetch.value }
            #expect(error?.code == .cancelled)
            #expect(await eventually { try await state() == "disconnected" })
            #expect(await client.statistics().activeTransfers == 0)
        }
    }

    @Test func cancellingAStreamReaderClosesTheConnection() async throws {
        try await withFixture { server, client in
            let key = UUID().uuidString
            let stream = try await client.stream(UpstreamRequest(url: server.url("/endless?id=\(key)")))
            let reader = Task {
                var chunks = 0
                for try await _ in stream.chunks { chunks += 1 }
                return chunks
            }
            let state = { try await client.fetch(UpstreamRequest(url: server.url("/state?id=\(key)"))).bodyText }
            #expect(await eventually { try await state() == "streaming" })
            reader.cancel()
            let error = await curlError { try await reader.value }
            #expect(error?.code == .cancelled)
            #expect(await eventually { try await state() == "disconnected" })
        }
    }

    @Test func alreadyCancelledTaskFailsWithoutATransfer() async throws {
        try await withFixture { server, client in
            let fetch = Task {
                withUnsafeCurrentTask { $0?.cancel() }
                return try await client.fetch(UpstreamRequest(url: server.url("/json")))
            }
            let error = await curlError { try await fetch.value }
            #expect(error?.code == .cancelled)
        }
    }

    @Test func refusedConnectionSaysCouldNotConnect() async throws {
        let client = CurlFetcher()
        // Port 1 on the loopback: nothing listens there on these machines.
        let error = await curlError { try await client.fetch(UpstreamRequest(url: "http://127.0.0.1:1/")) }
        await client.shutdown()
        #expect(error?.code == .couldNotConnect)
        #expect(error?.message.contains("Could not connect to http://127.0.0.1:1/") == true)
    }

    @Test func tlsToAPlainHTTPServerIsATLSFailure() async throws {
        try await withFixture { server, client in
            let url = "https://127.0.0.1:\(server.port)/json"
            let error = await curlError { try await client.fetch(UpstreamRequest(url: url)) }
            #expect(error?.code == .tlsFailure)
        }
    }

    @Test func protocolsOtherThanHTTPAreRefused() async throws {
        let client = CurlFetcher()
        let error = await curlError { try await client.fetch(UpstreamRequest(url: "file:///etc/passwd")) }
        await client.shutdown()
        #expect(error?.code == .invalidRequest)
    }

    @Test func redirectsAreNotFollowedByDefault() async throws {
        try await withFixture { server, client in
            let response = try await client.fetch(UpstreamRequest(url: server.url("/redirect?n=2")))
            #expect(response.status == 302)
            #expect(response.headers["Location"] == "/redirect?n=1")
        }
    }

    @Test func redirectsAreFollowedUpToTheLimit() async throws {
        try await withFixture(CurlFetcher.Configuration(maxRedirects: 3)) { server, client in
            let response = try await client.fetch(UpstreamRequest(url: server.url("/redirect?n=3")))
            #expect(response.status == 200)
            #expect(response.bodyText == "arrived")
            #expect(response.url == server.url("/redirect?n=0"))
            let error = await curlError { try await client.fetch(UpstreamRequest(url: server.url("/redirect?n=4"))) }
            #expect(error?.code == .tooManyRedirects)
        }
    }

    @Test func bodyOverTheCapFailsAsTooLarge() async throws {
        try await withFixture(CurlFetcher.Configuration(maxBodyBytes: 100_000)) { server, client in
            let announced = await curlError {
                try await client.fetch(UpstreamRequest(url: server.url("/big?bytes=300000")))
            }
            #expect(announced?.code == .tooLarge)
            let chunked = await curlError {
                try await client.fetch(UpstreamRequest(url: server.url("/big?bytes=300000&chunked=1")))
            }
            #expect(chunked?.code == .tooLarge)
            #expect(chunked?.message.contains("100000 bytes") == true)
            let fits = try await client.fetch(UpstreamRequest(url: server.url("/big?bytes=100000&chunked=1")))
            #expect(fits.body.count == 100_000)
        }
    }

    @Test func shutdownFailsInFlightFetchesAndLaterOnes() async throws {
        let server = try FixtureServer.start()
        defer { server.stop() }
        let client = CurlFetcher()
        let key = UUID().uuidString
        let fetch = Task { try await client.fetch(UpstreamRequest(url: server.url("/endless?id=\(key)"))) }
        let state = { try await client.fetch(UpstreamRequest(url: server.url("/state?id=\(key)"))).bodyText }
        #expect(await eventually { try await state() == "streaming" })
        await client.shutdown()
        let inFlight = await curlError { try await fetch.value }
        #expect(inFlight?.code == .shutdown)
        let later = await curlError { try await client.fetch(UpstreamRequest(url: server.url("/json"))) }
        #expect(later?.code == .shutdown)
        await client.shutdown()
    }
}
