import FeedbackLoop
import Logging
import SystemKit
import Upstream

/// The page a `paging` state asks for: what the fetch feedback reacts to. A new value cancels the fetch in flight.
struct PageRequest: Equatable, Sendable {
    /// The search it belongs to.
    let generation: Int
    /// The page's URL; nil for the first page of the query.
    let url: String?
    /// Which page of the search this is, from 1.
    let number: Int
    /// The search text.
    let query: String

    init?(_ state: PagingSystem.State) {
        guard case .loading = state.status else { return nil }
        generation = state.generation
        url = state.nextPage
        number = state.pagesLoaded.saturatingAdding(1)
        query = state.query
    }
}

/// One page's fetch as a sequence of events: a `retrying` per transient failure (then a wait), and at last one
/// `pageLoaded` or `pageFailed`.
///
/// Each `next()` runs in the task of the feedback that iterates it, so cancelling that task (a new search, a
/// clear, a deleted session) cancels the wait or the transfer in flight at once; cancellation ends the sequence
/// with an error, never with an event.
struct PageFetch: AsyncSequence, Sendable {
    typealias Element = PagingSystem.Event

    let request: PageRequest
    let reader: PageReader?
    let upstream: any UpstreamFetching
    let clock: any Clock<Duration>
    let logger: Logger

    func makeAsyncIterator() -> Iterator {
        Iterator(fetch: self)
    }

    struct Iterator: AsyncIteratorProtocol {
        let fetch: PageFetch
        var attempt = 0
        var wait: Duration?
        var finished = false

        mutating func next() async throws -> PagingSystem.Event? {
            guard !finished else { return nil }
            guard let reader = fetch.reader else {
                finished = true
                return .pageFailed(
                    url: fetch.request.url ?? "",
                    message: "no upstream is configured and the server's own address is unknown"
                )
            }
            let url = fetch.request.url ?? reader.firstPage(query: fetch.request.query)
            guard reader.isAllowed(url) else {
                finished = true
                return .pageFailed(url: url, message: "\(url) is not on the configured upstream; not fetched")
            }
            if let wait {
                self.wait = nil
                try await fetch.clock.sleep(for: wait)
            }
            attempt += 1
            let outcome = try await self.outcome(url: url, reader: reader)
            switch outcome {
            case .page(let page):
                finished = true
                return .pageLoaded(page)
            case .fail(let message):
                finished = true
                fetch.logger.info("page failed", metadata: ["upstream.url": "\(url)", "reason": "\(message)"])
                return .pageFailed(url: url, message: message)
            case .retry(let reason, let delay):
                let attempts = reader.configuration.maxAttempts
                guard attempt < attempts else {
                    finished = true
                    let message = "\(reason); gave up after \(attempts) attempt\(attempts == 1 ? "" : "s")"
                    fetch.logger.info("page failed", metadata: ["upstream.url": "\(url)", "reason": "\(message)"])
                    return .pageFailed(url: url, message: message)
                }
                let pause = delay ?? reader.configuration.backoff(afterAttempt: attempt, random: .random(in: 0...1))
                wait = pause
                let milliseconds =
                    Int(pause.components.seconds) * 1000
                    + Int(pause.components.attoseconds / 1_000_000_000_000_000)
                return .retrying(url: url, attempt: attempt, reason: reason, delayMilliseconds: milliseconds)
            }
        }

        private func outcome(url: String, reader: PageReader) async throws -> PageReader.Outcome {
            let request = UpstreamRequest(
                url: url,
                headers: ["Accept": "application/json"],
                totalTimeoutMilliseconds: reader.configuration.timeoutMilliseconds
            )
            do {
                let response = try await fetch.upstream.fetch(request)
                return reader.read(response, url: url, pageNumber: fetch.request.number, query: fetch.request.query)
            } catch let error as UpstreamError {
                // A cancelled fetch or a client shutting down ends the effect without an event.
                if error.code == .cancelled || error.code == .shutdown || Task.isCancelled { throw error }
                return reader.read(error)
            } catch {
                if Task.isCancelled { throw error }
                return .retry(reason: "\(error)", delay: nil)
            }
        }
    }
}
