public import FeedbackJSON
public import SystemKit

extension PagingSystem {
    /// What the list shows and what the fetch feedback should do next.
    ///
    /// The effect is encoded here: while `status` is `loading`, the feedback fetches `nextPage` for the search
    /// `generation`; any change of either cancels that fetch. A value type: safe to pass anywhere.
    ///
    /// On the wire `status` is a string (`idle`, `loading`, `failed`, `exhausted`) with a failure's text beside it in
    /// `message`, so that a page can write `state.status === "loading"`; every member is written (nil as null), and
    /// a member left out reads as its default.
    @FeedbackSchema(coding: .stable)
    public struct State: Codable, Equatable, Sendable {
        /// Where the list is.
        @FeedbackSchema(tag: "status")
        public enum Status: Equatable, Sendable {
            /// Nothing is being fetched; `loadNextPage` fetches `nextPage` if there is one.
            case idle
            /// The feedback is fetching `nextPage`.
            case loading
            /// The last fetch failed for good; `retry` fetches `nextPage` again.
            case failed(message: String = "")
            /// There is nothing more to load (`endReason` says why).
            case exhausted
        }

        /// The search the items answer; empty before the first search.
        public var query: String = ""
        /// The items of every page loaded so far, in order, as the upstream wrote them.
        public var items: [JSONValue] = []
        /// The absolute URL of the page to load next; nil before a search and once exhausted.
        public var nextPage: String?
        /// Where the list is.
        @Flattened public var status: Status = .idle
        /// Pages appended since the search.
        public var pagesLoaded: Int = 0
        /// The number of matches if the upstream says (`total_count` by default).
        public var total: Int?
        /// Counts searches and clears, so that searching the same text again starts over.
        public var generation: Int = 0
        /// Failed attempts at the page being loaded that will be retried; 0 once it arrives.
        public var retries: Int = 0
        /// Why the latest attempt failed, while the feedback retries it.
        public var lastError: String?
        /// Why paging stopped, once exhausted.
        public var endReason: String?
        /// The pages loaded since the search, to stop on a link or cursor that comes back.
        public var visited: [String] = []

        /// Creates a state; the defaults are an empty list before any search.
        public init(
            query: String = "",
            items: [JSONValue] = [],
            nextPage: String? = nil,
            status: Status = .idle,
            pagesLoaded: Int = 0,
            total: Int? = nil,
            generation: Int = 0,
            retries: Int = 0,
            lastError: String? = nil,
            endReason: String? = nil,
            visited: [String] = []
        ) {
            self.query = query
            self.items = items
            self.nextPage = nextPage
            self.status = status
            self.pagesLoaded = pagesLoaded
            self.total = total
            self.generation = generation
            self.retries = retries
            self.lastError = lastError
            self.endReason = endReason
            self.visited = visited
        }
    }
}
