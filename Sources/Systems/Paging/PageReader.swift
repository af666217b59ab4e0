import FeedbackJSON
import Foundation
public import Upstream

/// Turns upstream responses into pages, failures to retry, or failures to report, for one configured upstream.
///
/// It builds the first page's URL from the query, reads the items, the total and the next link (a `Link`
/// header with `rel="next"`, else a `next` field in the body, a URL or a cursor) and never lets a next link
/// leave the upstream's origin. Pure and immutable: safe to use from any task.
public struct PageReader: Sendable {
    /// What one response means for the page being loaded.
    public enum Outcome: Equatable, Sendable {
        /// A page (possibly the last).
        case page(PagingSystem.Page)
        /// A transient failure: try again after `delay`, or after a backoff when nil.
        case retry(reason: String, delay: Duration?)
        /// A failure that another attempt would not fix.
        case fail(message: String)
    }

    /// The configuration it reads with.
    public let configuration: PagingConfiguration
    /// The upstream search URL.
    public let upstream: String
    /// `scheme://host:port` of the upstream: the only origin ever fetched.
    public let origin: String?
    private let items: JSONPointer?
    private let total: JSONPointer?
    private let next: JSONPointer?

    /// Creates a reader for `upstream` (an absolute http or https URL).
    public init(configuration: PagingConfiguration, upstream: String) {
        self.configuration = configuration
        self.upstream = upstream
        origin = Self.origin(of: upstream)
        items = Self.pointer(configuration.itemsPath)
        total = Self.pointer(configuration.totalPath)
        next = Self.pointer(configuration.nextPath)
    }

    /// The URL of the first page of `query`.
    public func firstPage(query: String) -> String {
        Self.appendingQuery(to: upstream, [(configuration.queryParameter, query)])
    }

    /// Whether `url` is on the upstream's origin.
    public func isAllowed(_ url: String) -> Bool {
        origin != nil && Self.origin(of: url) == origin
    }

    /// Reads the response to a request for `url`, the `pageNumber`th page of `query`.
    public func read(_ response: UpstreamResponse, url: String, pageNumber: Int, query: String) -> Outcome {
        switch response.status {
        case 200..<300:
            return readPage(response, url: url, pageNumber: pageNumber, query: query)
        case 429, 503:
            let reason = "upstream answered \(response.status)"
            guard let value = response.headers["Retry-After"] else { return .retry(reason: reason, delay: nil) }
            guard let delay = RetryAfter.parse(value, now: Date()) else {
                return .retry(reason: "\(reason) with an unreadable Retry-After (\(value))", delay: nil)
            }
            guard delay <= .milliseconds(configuration.maxRetryAfterMilliseconds) else {
                return .fail(
                    message: "\(reason) asking to retry after \(value), longer than the "
                        + "\(configuration.maxRetryAfterMilliseconds) ms this server waits"
                )
            }
            return .retry(reason: "\(reason), Retry-After \(value)", delay: delay)
        case 408, 500..<600:
            return .retry(reason: "upstream answered \(response.status)", delay: nil)
        default:
            return .fail(message: "upstream answered \(response.status) for \(url)")
        }
    }

    /// What a transport failure means: most are worth another attempt, a few are not.
    public func read(_ error: UpstreamError) -> Outcome {
        switch error.code {
        case .invalidRequest, .tooLarge, .tooManyRedirects, .tlsFailure:
            return .fail(message: error.message)
        default:
            return .retry(reason: error.message, delay: nil)
        }
    }

    private func readPage(_ response: UpstreamResponse, url: String, pageNumber: Int, query: String) -> Outcome {
        let document: JSONValue
        do {
            document = try JSONValue(parsing: response.body, allowingDuplicateNames: true)
        } catch {
            return .fail(message: "the page from \(url) is not JSON (\(response.body.count) bytes)")
        }
        guard case .array(let found)? = items.flatMap({ $0.resolve(in: document) }) else {
            return .fail(message: "the page from \(url) has no array at \(configuration.itemsPath)")
        }
        var page = PagingSystem.Page(url: url, items: found)
        switch total.flatMap({ $0.resolve(in: document) }) {
        case .int(let count)?: page.total = Int(count)
        case .double(let count)? where count.isFinite && abs(count) < 1e15: page.total = Int(count)
        default: break
        }
        let base = response.url.isEmpty ? url : response.url
        guard let link = nextLink(response, document: document, base: base, query: query) else { return .page(page) }
        if !isAllowed(link) {
            page.stop = "the next link \(link) leaves the upstream \(origin ?? upstream); not followed"
        } else if pageNumber >= configuration.pageLimit {
            page.stop = "the page limit of \(configuration.pageLimit) pages was reached"
        } else {
            page.next = link
        }
        return .page(page)
    }

    /// The absolute URL of the following page, from the `Link` header or the body's `next` field.
    private func nextLink(_ response: UpstreamResponse, document: JSONValue, base: String, query: String) -> String? {
        if let target = LinkHeader.parse(response.headers.values(for: "Link")).next {
            return Self.resolve(target, against: base)
        }
        guard case .string(let value)? = next.flatMap({ $0.resolve(in: document) }), !value.isEmpty else {
            return nil
        }
        if value.contains("://") || value.hasPrefix("/") || value.hasPrefix("?") {
            return Self.resolve(value, against: base)
        }
        // A cursor: the first page's URL with the cursor beside the query.
        return Self.appendingQuery(to: firstPage(query: query), [(configuration.cursorParameter, value)])
    }

    static func resolve(_ reference: String, against base: String) -> String? {
        guard let baseURL = URL(string: base), let url = URL(string: reference, relativeTo: baseURL) else {
            return nil
        }
        return url.absoluteString
    }

    /// `scheme://host:port` with the default port made explicit; nil for anything but http and https.
    static func origin(of url: String) -> String? {
        guard let components = URLComponents(string: url), let scheme = components.scheme?.lowercased(),
            scheme == "http" || scheme == "https", let host = components.host?.lowercased(), !host.isEmpty
        else { return nil }
        let port = components.port ?? (scheme == "https" ? 443 : 80)
        return "\(scheme)://\(host):\(port)"
    }

    static func appendingQuery(to url: String, _ parameters: [(String, String)]) -> String {
        var allowed = CharacterSet.urlQueryAllowed
        allowed.remove(charactersIn: "&+=#;")
        var result = url
        for (name, value) in parameters {
            result += result.contains("?") ? "&" : "?"
            result += name.addingPercentEncoding(withAllowedCharacters: allowed) ?? name
            result += "="
            result += value.addingPercentEncoding(withAllowedCharacters: allowed) ?? value
        }
        return result
    }

    /// A JSON pointer (`/data/items`) or a dotted path (`data.items`); nil when it cannot be read.
    static func pointer(_ path: String) -> JSONPointer? {
        if path.hasPrefix("/") || path.isEmpty { return try? JSONPointer(path) }
        return JSONPointer(tokens: path.split(separator: ".", omittingEmptySubsequences: false).map(String.init))
    }
}
