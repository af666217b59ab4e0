import CurlClient
import FeedbackJSON
import FeedbackService
import Testing
import Upstream

@testable import Systems

/// How upstream responses become pages, retries or failures.
@Suite(.timeLimit(.minutes(1)))
struct PageReaderTests {
    let reader = PageReader(
        configuration: PagingConfiguration(pageLimit: 3, maxRetryAfterMilliseconds: 60_000),
        upstream: "http://api.test:8080/search"
    )

    private func response(_ status: Int, _ body: String, _ headers: UpstreamHeaders = [:]) -> UpstreamResponse {
        UpstreamResponse(
            head: UpstreamHead(status: status, headers: headers, url: "http://api.test:8080/search?q=a"),
            body: Array(body.utf8)
        )
    }

    private func read(_ response: UpstreamResponse, page: Int = 1) -> PageReader.Outcome {
        reader.read(response, url: "http://api.test:8080/search?q=a", pageNumber: page, query: "a")
    }

    @Test func firstPageCarriesTheEncodedQuery() {
        #expect(reader.firstPage(query: "red lamp&x=1") == "http://api.test:8080/search?q=red%20lamp%26x%3D1")
        let withQuery = PageReader(
            configuration: PagingConfiguration(queryParameter: "term"),
            upstream: "http://h/s?k=1"
        )
        #expect(withQuery.firstPage(query: "a") == "http://h/s?k=1&term=a")
    }

    @Test func readsItemsTotalAndARelativeLinkHeader() {
        let outcome = read(
            response(200, #"{"total_count":9,"items":[1,2]}"#, ["Link": #"</search?q=a&page=2>; rel="next""#])
        )
        let expected = PagingSystem.Page(
            url: "http://api.test:8080/search?q=a",
            items: [.int(1), .int(2)],
            next: "http://api.test:8080/search?q=a&page=2",
            total: 9
        )
        #expect(outcome == .page(expected))
    }

    @Test func aNextFieldIsALinkOrACursor() {
        guard case .page(let link) = read(response(200, #"{"items":[],"next":"?q=a&page=2"}"#)) else {
            Issue.record("not a page")
            return
        }
        #expect(link.next == "http://api.test:8080/search?q=a&page=2")
        guard case .page(let cursor) = read(response(200, #"{"items":[],"next":"abc=="}"#)) else {
            Issue.record("not a page")
            return
        }
        #expect(cursor.next == "http://api.test:8080/search?q=a&cursor=abc%3D%3D")
    }

    @Test func itemsAndTotalPathsAreConfigurable() {
        let custom = PageReader(
            configuration: PagingConfiguration(itemsPath: "data.results", totalPath: "/meta/count"),
            upstream: "http://api.test/x"
        )
        let outcome = custom.read(
            response(200, #"{"data":{"results":["a"]},"meta":{"count":1.0}}"#),
            url: "http://api.test/x?q=a",
            pageNumber: 1,
            query: "a"
        )
        #expect(outcome == .page(PagingSystem.Page(url: "http://api.test/x?q=a", items: [.string("a")], total: 1)))
    }

    @Test func aLinkToAnotherOriginIsNotFollowed() {
        for target in [
            "http://evil.test:8080/search?page=2", "https://api.test:8080/search?page=2", "http://api.test:81/s",
        ] {
            guard case .page(let page) = read(response(200, #"{"items":[1]}"#, ["Link": "<\(target)>; rel=\"next\""]))
            else {
                Issue.record("not a page")
                continue
            }
            #expect(page.next == nil)
            #expect(page.stop?.contains("not followed") == true)
        }
    }

    @Test func thePageLimitEndsPaging() {
        guard case .page(let page) = read(response(200, #"{"items":[1],"next":"/search?page=4"}"#), page: 3) else {
            Issue.record("not a page")
            return
        }
        #expect(page.next == nil)
        #expect(page.stop == "the page limit of 3 pages was reached")
    }

    @Test func rateLimitsWaitForRetryAfterAndOtherErrorsBackOff() {
        #expect(
            read(response(429, "", ["Retry-After": "7"]))
                == .retry(reason: "upstream answered 429, Retry-After 7", delay: .seconds(7))
        )
        #expect(read(response(503, "")) == .retry(reason: "upstream answered 503", delay: nil))
        #expect(read(response(500, "")) == .retry(reason: "upstream answered 500", delay: nil))
        guard case .fail(let message) = read(response(429, "", ["Retry-After": "3600"])) else {
            Issue.record("a long Retry-After should fail")
            return
        }
        #expect(message.contains("3600"))
        #expect(read(response(404, "")) == .fail(message: "upstream answered 404 for http://api.test:8080/search?q=a"))
    }

    @Test func malformedPagesFailWithAMessage() {
        #expect(
            read(response(200, #"{"items":[1,"#))
                == .fail(message: "the page from http://api.test:8080/search?q=a is not JSON (12 bytes)")
        )
        #expect(
            read(response(200, #"{"items":{}}"#))
                == .fail(message: "the page from http://api.test:8080/search?q=a has no array at /items")
        )
    }

    @Test func transportFailuresAreRetriedUnlessHopeless() {
        #expect(reader.read(UpstreamError(.timedOut, "slow")) == .retry(reason: "slow", delay: nil))
        #expect(reader.read(UpstreamError(.tooLarge, "big")) == .fail(message: "big"))
    }

    @Test func onlyTheUpstreamOriginIsAllowed() {
        #expect(reader.isAllowed("http://API.test:8080/other?x"))
        #expect(!reader.isAllowed("http://api.test/search"))
        #expect(!reader.isAllowed("file:///etc/passwd"))
        #expect(PageReader(configuration: PagingConfiguration(), upstream: "https://h/x").isAllowed("https://h:443/y"))
    }
}
