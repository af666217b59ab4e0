import Configuration
import FeedbackService
import Systems

extension PagingConfiguration {
    /// The `paging` system's settings, in the service's key space (`--upstream`, `FEEDBACKHOST_UPSTREAM`, ...).
    /// Their defaults are `PagingConfiguration()`'s, so the two cannot disagree.
    static let settings: [Setting] = {
        let defaults = PagingConfiguration()
        func text(_ key: String, _ value: String, _ summary: String) -> Setting {
            Setting(key, .text, default: value, summary)
        }
        func number(_ key: String, _ range: ClosedRange<Int>, _ value: Int, _ summary: String) -> Setting {
            Setting(key, .integer(range), default: String(value), summary)
        }
        return [
            text("upstream", "", "the paging system's search URL (none: this server's own /demo/catalog)"),
            text("upstream.query.parameter", defaults.queryParameter, "the query parameter the search text goes in"),
            text("upstream.cursor.parameter", defaults.cursorParameter, "the query parameter a next cursor goes in"),
            text("upstream.items.path", defaults.itemsPath, "where a page's items are (JSON pointer or dotted path)"),
            text("upstream.total.path", defaults.totalPath, "where a page's total count is"),
            text("upstream.next.path", defaults.nextPath, "where a page's next link or cursor is (without Link)"),
            number("paging.page.limit", 1...100_000, defaults.pageLimit, "pages loaded per search at most"),
            number("paging.timeout.ms", 0...3_600_000, defaults.timeoutMilliseconds, "the longest one page fetch"),
            number("paging.max.attempts", 1...100, defaults.maxAttempts, "attempts per page, the first included"),
            number("paging.backoff.ms", 0...3_600_000, defaults.backoffMilliseconds, "the first retry's backoff"),
            number(
                "paging.backoff.max.ms",
                0...3_600_000,
                defaults.maxBackoffMilliseconds,
                "the longest backoff"
            ),
            number(
                "paging.retry.after.max.ms",
                0...86_400_000,
                defaults.maxRetryAfterMilliseconds,
                "the longest Retry-After honoured; a longer one fails the page"
            ),
        ]
    }()

    /// Reads the configuration through `settings`.
    init(reader: ConfigReader) {
        let values = Dictionary(uniqueKeysWithValues: Self.settings.map { ($0.key, $0) })
        func text(_ key: String) -> String { reader.string(values[key]!) }
        func number(_ key: String) -> Int { reader.int(values[key]!) }
        let upstream = text("upstream")
        self.init(
            upstream: upstream.isEmpty ? nil : upstream,
            queryParameter: text("upstream.query.parameter"),
            cursorParameter: text("upstream.cursor.parameter"),
            itemsPath: text("upstream.items.path"),
            totalPath: text("upstream.total.path"),
            nextPath: text("upstream.next.path"),
            pageLimit: number("paging.page.limit"),
            timeoutMilliseconds: number("paging.timeout.ms"),
            maxAttempts: number("paging.max.attempts"),
            backoffMilliseconds: number("paging.backoff.ms"),
            maxBackoffMilliseconds: number("paging.backoff.max.ms"),
            maxRetryAfterMilliseconds: number("paging.retry.after.max.ms")
        )
    }
}
