import CurlClient
public import Upstream

/// The project's own client (`CurlFetcher`) with every answer's body checked by `AnswerWords`: what the service
/// tests send their requests with. One `CurlFetcher` inside, on its own queue (see its documentation); safe to share.
public final class CheckedFetcher: UpstreamFetching, Sendable {
    private let fetcher = CurlFetcher()

    /// A client with the default configuration.
    public init() {}

    /// The answer to `request`, after checking its body.
    public func fetch(_ request: UpstreamRequest) async throws -> UpstreamResponse {
        let response = try await fetcher.fetch(request)
        AnswerWords.check(response.body, contentType: response.headers["Content-Type"])
        return response
    }

    /// Shuts the client down.
    public func shutdown() async { await fetcher.shutdown() }
}
