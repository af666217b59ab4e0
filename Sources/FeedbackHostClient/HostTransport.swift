public import Foundation

#if canImport(FoundationNetworking)
public import FoundationNetworking
#endif

/// How a `FeedbackHost` sends one request and gets its answer: `URLSessionTransport` unless told otherwise. A test
/// puts its own in between to lose an answer or fail a request on purpose.
public protocol HostTransport: Sendable {
    /// Sends `request`; the answer's body and status, or an error when there was no answer.
    func send(_ request: URLRequest) async throws -> (body: Data, status: Int)
}

/// One `URLSession` without a cache, shared by every transport.
public struct URLSessionTransport: HostTransport {
    /// The shared session's transport.
    public init() {}

    public func send(_ request: URLRequest) async throws -> (body: Data, status: Int) {
        let (data, response) = try await Self.session.data(for: request)
        return (data, (response as? HTTPURLResponse)?.statusCode ?? 0)
    }

    /// The session the transports send with: `URLSessionConfiguration.default` without its `URLCache`. A feedback
    /// host's answers are never to be taken from a cache, and on Linux a session with one can trap the process: a
    /// task cancelled while swift-corelibs-foundation looks it up in the cache (on a background queue, before the
    /// task's protocol exists) reports its failure after it has left the session's task registry ("Trying to access
    /// a behaviour for a task that in not in the registry"; seen in `make test` when a store closed).
    public static let session = URLSession(configuration: uncachedConfiguration())

    /// `URLSessionConfiguration.default` without a cache (see `session`).
    static func uncachedConfiguration() -> URLSessionConfiguration {
        let configuration = URLSessionConfiguration.default
        configuration.urlCache = nil
        configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
        return configuration
    }
}
