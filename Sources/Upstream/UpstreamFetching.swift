/// The role of something that fetches from upstream HTTP APIs: ``CurlFetcher`` in production, a fake in tests.
///
/// Conforming types must be safe to call from any task.
public protocol UpstreamFetching: Sendable {
    /// Sends the request and returns the whole response; an HTTP error status is a response, not an error.
    /// Throws ``UpstreamError``; cancelling the calling task cancels the request.
    func fetch(_ request: UpstreamRequest) async throws -> UpstreamResponse
}
