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

/// `URLSession.shared`.
public struct URLSessionTransport: HostTransport {
    /// The shared session's transport.
    public init() {}

    public func send(_ request: URLRequest) async throws -> (body: Data, status: Int) {
        let (data, response) = try await URLSession.shared.data(for: request)
        return (data, (response as? HTTPURLResponse)?.statusCode ?? 0)
    }
}
