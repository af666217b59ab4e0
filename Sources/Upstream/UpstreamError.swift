/// The one error type of upstream fetching: what went wrong with an upstream request, in words a person can act on.
///
/// An HTTP error status (404, 503, ...) is not an error: it arrives as an ``UpstreamResponse``.
/// A value type: safe to pass anywhere.
public struct UpstreamError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What kind of failure happened.
    public enum Code: String, Sendable, Hashable, CaseIterable {
        /// The request itself is unusable (bad URL, a protocol other than http or https).
        case invalidRequest
        /// The host name could not be resolved.
        case couldNotResolve
        /// No connection could be made (refused, unreachable, connect timeout excluded).
        case couldNotConnect
        /// A configured timeout (connect, total, or low speed) expired.
        case timedOut
        /// The response body is larger than the configured cap, or a streamed line is longer than its cap.
        case tooLarge
        /// More redirects than configured were needed.
        case tooManyRedirects
        /// The TLS handshake or certificate verification failed.
        case tlsFailure
        /// The upstream sent something that is not valid HTTP, closed early, or failed to encode its body.
        case badResponse
        /// The transfer failed while sending or receiving on an established connection.
        case connectionFailed
        /// The calling task was cancelled, or the stream was cancelled.
        case cancelled
        /// The client was shut down before or while the request ran.
        case shutdown
        /// Anything libcurl reports that has no better code here.
        case other
    }

    /// What kind of failure happened.
    public var code: Code
    /// A sentence saying what happened, with the upstream URL where useful.
    public var message: String

    /// Creates an error from a code and a message.
    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    /// `code: message`.
    public var description: String { "\(code.rawValue): \(message)" }
}
