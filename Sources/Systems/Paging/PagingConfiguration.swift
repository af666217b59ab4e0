/// Where the `paging` system fetches from and how patiently: the upstream, the shape of its pages, limits and
/// retry timing.
///
/// The defaults speak GitHub's search API (`GET URL?q=QUERY`, items under `items`, `total_count`, `Link` headers
/// with `rel="next"`), which the server's own demo catalog speaks too. A value type: safe to pass anywhere.
public struct PagingConfiguration: Sendable, Equatable {
    /// The upstream search URL; nil means the server's own `/demo/catalog` over loopback.
    public var upstream: String?
    /// The query parameter the search text goes in.
    public var queryParameter: String
    /// The query parameter a `next` cursor from a page's body goes in (when it is not a URL).
    public var cursorParameter: String
    /// Where the items array is in a page (a JSON pointer, or a dotted path such as `data.items`).
    public var itemsPath: String
    /// Where the total number of matches is (optional in a page).
    public var totalPath: String
    /// Where a `next` link or cursor is in a page's body (used when there is no `Link: rel="next"` header).
    public var nextPath: String
    /// Pages loaded per search at most.
    public var pageLimit: Int
    /// The longest one page fetch may take, in milliseconds.
    public var timeoutMilliseconds: Int
    /// Attempts per page, the first included, before the page fails.
    public var maxAttempts: Int
    /// The first backoff after a failure, in milliseconds; it doubles per attempt, with jitter.
    public var backoffMilliseconds: Int
    /// The longest backoff, in milliseconds.
    public var maxBackoffMilliseconds: Int
    /// The longest `Retry-After` honoured, in milliseconds; a longer one fails the page with a message.
    public var maxRetryAfterMilliseconds: Int

    /// Creates a configuration; every parameter has a default.
    public init(
        upstream: String? = nil,
        queryParameter: String = "q",
        cursorParameter: String = "cursor",
        itemsPath: String = "/items",
        totalPath: String = "/total_count",
        nextPath: String = "/next",
        pageLimit: Int = 50,
        timeoutMilliseconds: Int = 10_000,
        maxAttempts: Int = 4,
        backoffMilliseconds: Int = 250,
        maxBackoffMilliseconds: Int = 8_000,
        maxRetryAfterMilliseconds: Int = 120_000
    ) {
        self.upstream = upstream
        self.queryParameter = queryParameter
        self.cursorParameter = cursorParameter
        self.itemsPath = itemsPath
        self.totalPath = totalPath
        self.nextPath = nextPath
        self.pageLimit = max(1, pageLimit)
        self.timeoutMilliseconds = max(0, timeoutMilliseconds)
        self.maxAttempts = max(1, maxAttempts)
        self.backoffMilliseconds = max(0, backoffMilliseconds)
        self.maxBackoffMilliseconds = max(0, maxBackoffMilliseconds)
        self.maxRetryAfterMilliseconds = max(0, maxRetryAfterMilliseconds)
    }

    /// The backoff before attempt `attempt + 1` after `attempt` failures: doubling from `backoffMilliseconds`, capped,
    /// then a random point in its upper half ("equal jitter") so that many sessions do not retry in step.
    public func backoff(afterAttempt attempt: Int, random: Double) -> Duration {
        let doublings = min(max(attempt - 1, 0), 20)
        let ceiling = min(backoffMilliseconds << doublings, maxBackoffMilliseconds)
        let jittered = Double(ceiling) * (0.5 + 0.5 * min(max(random, 0), 1))
        return .milliseconds(Int(jittered.rounded()))
    }
}
