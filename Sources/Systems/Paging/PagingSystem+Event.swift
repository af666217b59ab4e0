public import FeedbackJSON
import SystemKit

extension PagingSystem {
    /// One page as the fetch feedback read it.
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
    public enum Event: Codable, Equatable, Sendable {
        /// Start over with a new query (the same text again also starts over); the first page loads at once.
        case search(query: String)
        /// Load the next page when idle.
        case loadNextPage
        /// Load the failed page again.
        case retry
        /// Forget the query and the items; cancels a fetch in flight.
        case clear
        /// A page arrived.
        case pageLoaded(Page)
        /// An attempt failed and will be retried after `delayMilliseconds`.
        case retrying(url: String, attempt: Int, reason: String, delayMilliseconds: Int)
        /// The page could not be loaded; `message` says why.
        case pageFailed(url: String, message: String)

        static let types = ["search", "loadNextPage", "retry", "clear", "pageLoaded", "retrying", "pageFailed"]

        private static func key(_ name: String) -> TaggedEventKey { TaggedEventKey(name) }

        public init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: TaggedEventKey.self)
            switch try container.eventType() {
            case "search": self = .search(query: try container.decode(String.self, forKey: Self.key("query")))
            case "loadNextPage": self = .loadNextPage
            case "retry": self = .retry
            case "clear": self = .clear
            case "pageLoaded": self = .pageLoaded(try Page(from: decoder))
            case "retrying":
                self = .retrying(
                    url: try container.decode(String.self, forKey: Self.key("url")),
                    attempt: try container.decode(Int.self, forKey: Self.key("attempt")),
                    reason: try container.decode(String.self, forKey: Self.key("reason")),
                    delayMilliseconds: try container.decode(Int.self, forKey: Self.key("delayMilliseconds"))
                )
            case "pageFailed":
                self = .pageFailed(
                    url: try container.decode(String.self, forKey: Self.key("url")),
                    message: try container.decode(String.self, forKey: Self.key("message"))
                )
            case let other: throw container.unknownType(other, known: Self.types)
            }
        }

        public func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: TaggedEventKey.self)
            switch self {
            case .search(let query):
                try container.encode("search", forKey: .type)
                try container.encode(query, forKey: Self.key("query"))
            case .loadNextPage: try container.encode("loadNextPage", forKey: .type)
            case .retry: try container.encode("retry", forKey: .type)
            case .clear: try container.encode("clear", forKey: .type)
            case .pageLoaded(let page):
                try container.encode("pageLoaded", forKey: .type)
                try page.encode(to: encoder)
            case .retrying(let url, let attempt, let reason, let delay):
                try container.encode("retrying", forKey: .type)
                try container.encode(url, forKey: Self.key("url"))
                try container.encode(attempt, forKey: Self.key("attempt"))
                try container.encode(reason, forKey: Self.key("reason"))
                try container.encode(delay, forKey: Self.key("delayMilliseconds"))
            case .pageFailed(let url, let message):
                try container.encode("pageFailed", forKey: .type)
                try container.encode(url, forKey: Self.key("url"))
                try container.encode(message, forKey: Self.key("message"))
            }
        }
    }
}
