import FeedbackLoop
import Foundation
import Testing

@testable import Systems

/// The fetch feedback against a fake upstream started per test: real libcurl transfers over loopback, a virtual
/// clock for backoffs and `Retry-After`, and the fixture's own log as the witness of cancelled transfers.
@Suite(.timeLimit(.minutes(1)), .statesFitTheirSchemas)
struct PagingFaultTests {
    private func requests(_ log: [[String: Any]]) -> Int {
        log.filter { $0["event"] as? String == "request" }.count
    }

    @Test func linkHeadersAreFollowedPageByPageToTheLast() async throws {
        try await withPagingUpstream { upstream in
            let harness = PagingHarness(upstream: upstream)
            harness.loop.send(.search(query: "pages:k"))
            let first = await harness.state { $0.pagesLoaded == 1 && $0.status == .idle }
            #expect(first?.items.count == 2)
            #expect(first?.total == 6)
            #expect(first?.nextPage == "\(upstream.searchURL)?q=pages:k&page=2")
            harness.loop.send(.loadNextPage)
            _ = await harness.state { $0.pagesLoaded == 2 && $0.status == .idle }
            harness.loop.send(.loadNextPage)
            let last = await harness.state { $0.status == .exhausted }
            #expect(last?.items.count == 6)
            #expect(last?.endReason == "the upstream has no further page")
            let logk = try await upstream.log(key: "k")
            #expect(requests(logk) == 3)
            await harness.stop()
        }
    }

    @Test func serverErrorsAreRetriedWithBackoffUntilThePageArrives() async throws {
        try await withPagingUpstream { upstream in
            let harness = PagingHarness(upstream: upstream)
            harness.loop.send(.search(query: "flaky:k"))
            let retrying = await harness.state { $0.retries == 1 }
            #expect(retrying?.lastError?.hasPrefix("upstream answered 500; retrying in") == true)
            await harness.passBackoff(.milliseconds(400))
            _ = await harness.state { $0.retries == 2 }
            await harness.passBackoff(.milliseconds(400))
            let loaded = await harness.state { $0.pagesLoaded == 1 }
            #expect(loaded?.status == .exhausted)
            #expect(loaded?.retries == 0)
            #expect(loaded?.lastError == nil)
            let logk = try await upstream.log(key: "k")
            #expect(requests(logk) == 3)
            await harness.stop()
        }
    }

    @Test func tooManyRequestsWaitsForRetryAfterBeforeTheNextAttempt() async throws {
        try await withPagingUpstream { upstream in
            let harness = PagingHarness(upstream: upstream)
            harness.loop.send(.search(query: "limited:k"))
            let waiting = await harness.state { $0.retries == 1 }
            #expect(waiting?.lastError == "upstream answered 429, Retry-After 30; retrying in 30000 ms")
            await harness.clock.waitForSleepers(count: 1)
            harness.clock.advance(by: .milliseconds(29_999))
            // The sleep has not ended, so no second request can have been made.
            let logk = try await upstream.log(key: "k")
            #expect(requests(logk) == 1)
            harness.clock.advance(by: .milliseconds(1))
            let loaded = await harness.state { $0.pagesLoaded == 1 }
            #expect(loaded?.items.count == 2)
            await harness.stop()
        }
    }

    @Test func anUpstreamThatStaysDownFailsWithAMessageAndRetryStartsAgain() async throws {
        try await withPagingUpstream { upstream in
            let harness = PagingHarness(upstream: upstream) { $0.maxAttempts = 2 }
            harness.loop.send(.search(query: "unavailable:k"))
            _ = await harness.state { $0.retries == 1 }
            await harness.passBackoff(.seconds(1))
            let failed = await harness.state { if case .failed = $0.status { true } else { false } }
            #expect(
                failed?.status == .failed(message: "upstream answered 503, Retry-After 1; gave up after 2 attempts")
            )
            harness.loop.send(.retry)
            // The retry's first attempt is the third request the upstream sees.
            let log = try await upstream.wait(key: "k", event: "request", count: 3)
            #expect(requests(log) == 3)
            await harness.stop()
        }
    }

    @Test func aTimeoutClosesTheTransferAndIsRetried() async throws {
        try await withPagingUpstream { upstream in
            let harness = PagingHarness(upstream: upstream) { $0.timeoutMilliseconds = 300 }
            harness.loop.send(.search(query: "hang:k"))
            let retrying = await harness.state { $0.retries == 1 }
            #expect(retrying?.lastError?.contains("retrying in") == true)
            _ = try await upstream.wait(key: "k", event: "closed")
            await harness.passBackoff(.milliseconds(400))
            let loaded = await harness.state { $0.pagesLoaded == 1 }
            #expect(loaded?.items.count == 2)
            await harness.stop()
        }
    }

    @Test func malformedJSONBecomesAFailedStatusWithAMessage() async throws {
        try await withPagingUpstream { upstream in
            let harness = PagingHarness(upstream: upstream)
            harness.loop.send(.search(query: "malformed:k"))
            let failed = await harness.state { if case .failed = $0.status { true } else { false } }
            guard case .failed(let message)? = failed?.status else { return }
            #expect(message.contains("is not JSON"))
            #expect(failed?.items.isEmpty == true)
            harness.loop.send(.search(query: "wrongshape:k2"))
            let wrong = await harness.state { $0.query == "wrongshape:k2" && $0.status != .loading }
            #expect(
                wrong?.status
                    == .failed(message: "the page from \(upstream.searchURL)?q=wrongshape:k2 has no array at /items")
            )
            await harness.stop()
        }
    }

    @Test func aSlowBodyArrivesWhole() async throws {
        try await withPagingUpstream { upstream in
            let harness = PagingHarness(upstream: upstream)
            harness.loop.send(.search(query: "dribble:k"))
            let loaded = await harness.state { $0.status != .loading }
            #expect(loaded?.status == .exhausted)
            #expect(loaded?.items.count == 2)
            await harness.stop()
        }
    }

    @Test func aBodyStalledPastTheTimeoutIsCutAndRetriedNeverHalfRead() async throws {
        try await withPagingUpstream { upstream in
            let harness = PagingHarness(upstream: upstream) { $0.timeoutMilliseconds = 300 }
            harness.loop.send(.search(query: "slow:k"))
            let retrying = await harness.state { $0.retries == 1 }
            #expect(retrying?.items.isEmpty == true)
            _ = try await upstream.wait(key: "k", event: "closed")
            harness.loop.send(.clear)
            // A longer timeout for the dribbled second answer.
            let patient = PagingHarness(upstream: upstream)
            patient.loop.send(.search(query: "slow:k"))
            let loaded = await patient.state { $0.status != .loading }
            #expect(loaded?.items.count == 2)
            await patient.stop()
            await harness.stop()
        }
    }

    @Test func aNextLinkToAnotherOriginIsNotFollowed() async throws {
        try await withPagingUpstream { upstream in
            let harness = PagingHarness(upstream: upstream)
            harness.loop.send(.search(query: "foreign:k"))
            let stopped = await harness.state { $0.status != .loading }
            #expect(stopped?.status == .exhausted)
            #expect(stopped?.items.count == 2)
            #expect(stopped?.endReason?.contains("http://localhost:\(upstream.port)/search") == true)
            harness.loop.send(.loadNextPage)
            #expect(harness.loop.state.status == .exhausted)
            let logk = try await upstream.log(key: "k")
            #expect(requests(logk) == 1)
            await harness.stop()
        }
    }

    @Test func aStateNamingAnotherOriginIsNeverFetched() async throws {
        try await withPagingUpstream { upstream in
            let foreign = "http://localhost:\(upstream.port)/search?q=pages:k"
            let harness = PagingHarness(
                upstream: upstream,
                from: PagingSystem.State(query: "x", nextPage: foreign, status: .loading, pagesLoaded: 1)
            )
            let failed = await harness.state { $0.status != .loading }
            #expect(failed?.status == .failed(message: "\(foreign) is not on the configured upstream; not fetched"))
            let log = try await upstream.log(key: "k")
            #expect(log.isEmpty)
            await harness.stop()
        }
    }

    @Test func aCursorInTheBodyIsFollowed() async throws {
        try await withPagingUpstream { upstream in
            let harness = PagingHarness(upstream: upstream)
            harness.loop.send(.search(query: "cursor:k"))
            let first = await harness.state { $0.pagesLoaded == 1 }
            #expect(first?.nextPage == "\(upstream.searchURL)?q=cursor:k&cursor=c2")
            harness.loop.send(.loadNextPage)
            let last = await harness.state { $0.status == .exhausted }
            #expect(last?.items.count == 3)
            await harness.stop()
        }
    }

    @Test func aRepeatedLinkAndThePageLimitStopPaging() async throws {
        try await withPagingUpstream { upstream in
            let circle = PagingHarness(upstream: upstream)
            circle.loop.send(.search(query: "circle:k"))
            _ = await circle.state { $0.pagesLoaded == 1 && $0.status == .idle }
            circle.loop.send(.loadNextPage)
            let repeated = await circle.state { $0.status == .exhausted }
            #expect(repeated?.pagesLoaded == 2)
            #expect(repeated?.endReason?.contains("again") == true)
            await circle.stop()

            let limited = PagingHarness(upstream: upstream) { $0.pageLimit = 2 }
            limited.loop.send(.search(query: "endless:k2"))
            _ = await limited.state { $0.pagesLoaded == 1 && $0.status == .idle }
            limited.loop.send(.loadNextPage)
            let capped = await limited.state { $0.status == .exhausted }
            #expect(capped?.endReason == "the page limit of 2 pages was reached")
            let logk2 = try await upstream.log(key: "k2")
            #expect(requests(logk2) == 2)
            await limited.stop()
        }
    }

    @Test func aNewSearchCancelsTheTransferInFlight() async throws {
        try await withPagingUpstream { upstream in
            let harness = PagingHarness(upstream: upstream)
            harness.loop.send(.search(query: "hang:k"))
            _ = try await upstream.wait(key: "k", event: "request")
            harness.loop.send(.search(query: "pages:k2"))
            let log = try await upstream.wait(key: "k", event: "closed")
            #expect(log.last?["page"] as? Int == 1)
            let loaded = await harness.state { $0.pagesLoaded == 1 }
            #expect(loaded?.query == "pages:k2")
            let logk = try await upstream.log(key: "k")
            #expect(requests(logk) == 1)
            await harness.stop()
        }
    }

    @Test func stoppingTheLoopCancelsTheTransferInFlight() async throws {
        try await withPagingUpstream { upstream in
            let harness = PagingHarness(upstream: upstream)
            harness.loop.send(.search(query: "hang:k"))
            _ = try await upstream.wait(key: "k", event: "request")
            harness.loop.stop()
            _ = try await upstream.wait(key: "k", event: "closed")
            #expect(harness.loop.state.status == .loading)
            await harness.stop()
        }
    }
}
