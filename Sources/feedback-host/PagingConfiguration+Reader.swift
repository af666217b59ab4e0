import Configuration
import Systems

extension PagingConfiguration {
    /// Reads the configuration from the service's key space: `upstream` (`--upstream`, `FEEDBACKHOST_UPSTREAM`),
    /// `upstream.query.parameter`, `upstream.cursor.parameter`, `upstream.items.path`, `upstream.total.path`,
    /// `upstream.next.path`, `paging.page.limit`, `paging.timeout.ms`, `paging.max.attempts`, `paging.backoff.ms`,
    /// `paging.backoff.max.ms`, `paging.retry.after.max.ms`.
    init(reader: ConfigReader) {
        let defaults = PagingConfiguration()
        let upstream = reader.string(forKey: "upstream", default: "")
        self.init(
            upstream: upstream.isEmpty ? nil : upstream,
            queryParameter: reader.string(forKey: "upstream.query.parameter", default: defaults.queryParameter),
            cursorParameter: reader.string(forKey: "upstream.cursor.parameter", default: defaults.cursorParameter),
            itemsPath: reader.string(forKey: "upstream.items.path", default: defaults.itemsPath),
            totalPath: reader.string(forKey: "upstream.total.path", default: defaults.totalPath),
            nextPath: reader.string(forKey: "upstream.next.path", default: defaults.nextPath),
            pageLimit: reader.int(forKey: "paging.page.limit", default: defaults.pageLimit),
            timeoutMilliseconds: reader.int(forKey: "paging.timeout.ms", default: defaults.timeoutMilliseconds),
            maxAttempts: reader.int(forKey: "paging.max.attempts", default: defaults.maxAttempts),
            backoffMilliseconds: reader.int(forKey: "paging.backoff.ms", default: defaults.backoffMilliseconds),
            maxBackoffMilliseconds: reader.int(
                forKey: "paging.backoff.max.ms",
                default: defaults.maxBackoffMilliseconds
            ),
            maxRetryAfterMilliseconds: reader.int(
                forKey: "paging.retry.after.max.ms",
                default: defaults.maxRetryAfterMilliseconds
            )
        )
    }
}
