public import FeedbackJSON
public import SystemKit

extension PagingSystem {
    /// One page as the fetch feedback read it.
    @FeedbackSchema
    public struct Page: Codable, Equatable, Sendable {
        /// The URL the page was fetched from.
        public var url: String
        /// The page's items.
        public var items: [JSONValue]
        /// The absolute URL of the following page; nil on the last page.
        public var next: String?
        /// The number of matches if the upstream says.
        public var total: Int?
        /// Why there is no following page although the upstream named one (page limit, another origin).
        public var stop: String?

        /// Creates a page.
        public init(url: String, items: [JSONValue], next: String? = nil, total: Int? = nil, stop: String? = nil) {
            self.url = url
            self.items = items
            self.next = next
            self.total = total
            self.stop = stop
        }
    }

    /// `search`, `loadNextPage`, `retry` and `clear` are the client's; the rest are the fetch feedback's.
    @FeedbackEvent
    public enum Event: Equatable, Sendable {
        /// Start over with a new query (the same text again also starts over); the first page loads at once.
        case search(query: String)
        /// Load the next page when idle.
        case loadNextPage
        /// Load the failed page again.
        case retry
        /// Forget the query and the items; cancels a fetch in flight.
        case clear
        /// A page arrived: its fields beside `"type"`.
        @Effect case pageLoaded(Page)
        /// An attempt failed and will be retried after `delayMilliseconds`.
        @Effect case retrying(url: String, attempt: Int, reason: String, delayMilliseconds: Int)
        /// The page could not be loaded; `message` says why.
        @Effect case pageFailed(url: String, message: String)
    }
}
