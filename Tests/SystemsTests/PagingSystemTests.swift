import FeedbackJSON
import FeedbackService
import Foundation
import SystemKit
import Testing

@testable import Systems

/// The paging reducer and its wire format, without I/O.
@Suite(.timeLimit(.minutes(1)), .statesFitTheirSchemas)
struct PagingSystemTests {
    typealias State = PagingSystem.State

    private func page(_ url: String, _ items: [Int], next: String? = nil, total: Int? = nil) -> PagingSystem.Event {
        .pageLoaded(PagingSystem.Page(url: url, items: items.map { .int(Int64($0)) }, next: next, total: total))
    }

    @Test func searchStartsOverAndAsksForTheFirstPage() {
        var state = State(query: "old", items: [.int(1)], nextPage: "http://u/2", pagesLoaded: 1, generation: 3)
        PagingSystem.reduceAndNote(&state, .search(query: "lamp"))
        #expect(state == State(query: "lamp", status: .loading, generation: 4))
    }

    @Test func aPageIsAppendedAndTheNextWaitsForLoadNextPage() {
        var state = State()
        PagingSystem.reduceAndNote(&state, .search(query: "q"))
        PagingSystem.reduceAndNote(&state, page("http://u/1", [1, 2], next: "http://u/2", total: 4))
        #expect(state.items == [.int(1), .int(2)])
        #expect(state.status == .idle)
        #expect(state.nextPage == "http://u/2")
        #expect(state.pagesLoaded == 1)
        #expect(state.total == 4)
        PagingSystem.reduceAndNote(&state, .loadNextPage)
        #expect(state.status == .loading)
        PagingSystem.reduceAndNote(&state, page("http://u/2", [3, 4]))
        #expect(state.items.count == 4)
        #expect(state.status == .exhausted)
        #expect(state.nextPage == nil)
        #expect(state.total == 4)
        #expect(state.endReason == "the upstream has no further page")
    }

    @Test func loadNextPageDoesNothingUnlessIdleWithANextPage() {
        var fresh = State()
        PagingSystem.reduceAndNote(&fresh, .loadNextPage)
        #expect(fresh == State())
        var exhausted = State(query: "q", status: .exhausted, pagesLoaded: 2)
        PagingSystem.reduceAndNote(&exhausted, .loadNextPage)
        #expect(exhausted.status == .exhausted)
        var loading = State(query: "q", nextPage: "http://u/2", status: .loading)
        PagingSystem.reduceAndNote(&loading, .loadNextPage)
        #expect(loading.status == .loading)
    }

    @Test func aLinkThatComesBackStopsPaging() {
        var state = State()
        PagingSystem.reduceAndNote(&state, .search(query: "q"))
        PagingSystem.reduceAndNote(&state, page("http://u/1", [1], next: "http://u/2"))
        PagingSystem.reduceAndNote(&state, .loadNextPage)
        PagingSystem.reduceAndNote(&state, page("http://u/2", [2], next: "http://u/1"))
        #expect(state.status == .exhausted)
        #expect(state.items.count == 2)
        #expect(state.endReason?.contains("http://u/1") == true)
    }

    @Test func theFeedbacksStopReasonIsKept() {
        var state = State(query: "q", status: .loading)
        PagingSystem.reduce(
            &state,
            .pageLoaded(PagingSystem.Page(url: "http://u/1", items: [], stop: "the page limit of 1 pages was reached"))
        )
        #expect(state.status == .exhausted)
        #expect(state.endReason == "the page limit of 1 pages was reached")
    }

    @Test func retriesAreShownAndAFailureWaitsForRetry() {
        var state = State()
        PagingSystem.reduceAndNote(&state, .search(query: "q"))
        PagingSystem.reduce(
            &state,
            .retrying(url: "http://u/1", attempt: 1, reason: "upstream answered 500", delayMilliseconds: 80)
        )
        #expect(state.retries == 1)
        #expect(state.lastError == "upstream answered 500; retrying in 80 ms")
        #expect(state.status == .loading)
        PagingSystem.reduceAndNote(&state, .pageFailed(url: "http://u/1", message: "gave up"))
        #expect(state.status == .failed(message: "gave up"))
        #expect(state.retries == 0)
        PagingSystem.reduceAndNote(&state, .loadNextPage)
        #expect(state.status == .failed(message: "gave up"))
        PagingSystem.reduceAndNote(&state, .retry)
        #expect(state.status == .loading)
        PagingSystem.reduceAndNote(&state, page("http://u/1", [1]))
        #expect(state.items == [.int(1)])
    }

    @Test func feedbackEventsCountOnlyWhileLoading() {
        let idle = State(query: "q", items: [.int(1)], nextPage: "http://u/2", pagesLoaded: 1, generation: 1)
        for event in [
            page("http://u/2", [9]), .pageFailed(url: "http://u/2", message: "x"),
            .retrying(url: "http://u/2", attempt: 1, reason: "r", delayMilliseconds: 1),
        ] {
            var state = idle
            PagingSystem.reduceAndNote(&state, event)
            #expect(state == idle)
        }
        var state = idle
        PagingSystem.reduceAndNote(&state, .retry)
        #expect(state == idle)
    }

    @Test func clearForgetsEverythingButCountsTheGeneration() {
        var state = State(query: "q", items: [.int(1)], status: .loading, pagesLoaded: 1, generation: 5)
        PagingSystem.reduceAndNote(&state, .clear)
        #expect(state == State(generation: 6))
    }

    @Test func stateTravelsWithAStatusStringAndAMessage() throws {
        let failed = State(query: "q", status: .failed(message: "upstream answered 404"), generation: 1)
        let json = try encode(failed)
        #expect(json.contains(#""status":"failed""#))
        #expect(json.contains(#""message":"upstream answered 404""#))
        #expect(json.contains(#""nextPage":null"#))
        #expect(try decode(State.self, json) == failed)
        #expect(try encode(State()).contains(#""status":"idle""#))
        #expect(throws: (any Error).self) { try decode(State.self, #"{"status":"sleeping"}"#) }
    }

    @Test func eventsReadAndWriteTheirTaggedShape() throws {
        #expect(try decode(PagingSystem.Event.self, #"{"type":"search","query":"lamp"}"#) == .search(query: "lamp"))
        #expect(try decode(PagingSystem.Event.self, #"{"type":"loadNextPage"}"#) == .loadNextPage)
        let loaded = page("http://u/1", [1], next: "http://u/2", total: 3)
        #expect(try decode(PagingSystem.Event.self, try encode(loaded)) == loaded)
        let retrying = PagingSystem.Event.retrying(url: "u", attempt: 2, reason: "r", delayMilliseconds: 5)
        #expect(try decode(PagingSystem.Event.self, try encode(retrying)) == retrying)
        #expect(PagingSystem().clientEventTypes == ["search", "loadNextPage", "retry", "clear"])
    }

    @Test func backoffDoublesUpToItsCapWithJitterInTheUpperHalf() {
        let configuration = PagingConfiguration(backoffMilliseconds: 100, maxBackoffMilliseconds: 350)
        #expect(configuration.backoff(afterAttempt: 1, random: 1) == .milliseconds(100))
        #expect(configuration.backoff(afterAttempt: 1, random: 0) == .milliseconds(50))
        #expect(configuration.backoff(afterAttempt: 2, random: 1) == .milliseconds(200))
        #expect(configuration.backoff(afterAttempt: 3, random: 1) == .milliseconds(350))
        #expect(configuration.backoff(afterAttempt: 60, random: 0) == .milliseconds(175))
    }
}

/// The items are written as `JSONValue`'s own `Encodable` conformance writes them, by the derived coding and by
/// `StateWriter` (which converts them rather than encoding value by value).
@Suite struct PagingItemsTests {
    @Test func itemsEncodeAsJSONValueWouldEncodeThem() throws {
        let items: [JSONValue] = [
            .object([
                "id": .int(7), "name": .string("Amber \"Lamp\""), "price": .double(12.5),
                "tags": .array([.string("a"), .null]),
                "nested": .object(["ok": .bool(true), "empty": .object([:]), "list": .array([])]),
            ]),
            .int(-3), .string("é/\\"), .bool(false), .null, .array([.array([.int(1)])]), .double(1e300),
        ]
        let state = PagingSystem.State(query: "q", items: items)
        let viaState = try encode(state)
        let viaJSONValue = try encode(items)
        #expect(viaState.contains(#""items":\#(viaJSONValue)"#))
        #expect(try decode(PagingSystem.State.self, viaState).items == items)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        #expect(PagingSystem.encodeState(state) == Array(try encoder.encode(state)))
    }
}
