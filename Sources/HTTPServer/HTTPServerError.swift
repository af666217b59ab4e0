/// The one error type of the HTTPServer module: a code, the HTTP status it maps to, and a message a person can act on.
///
/// Values are immutable and `Sendable`; they are created on a shard queue (parsing, routing) or by handlers.
public struct HTTPServerError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What went wrong, in a form code can switch over.
    public enum Code: Sendable, Equatable {
        /// The request is malformed or ambiguous (smuggling vectors, invalid bytes, bad framing): 400 and close.
        case badRequest
        /// The request line is longer than the configured limit: 414.
        case uriTooLong
        /// The header block or header count exceeds the configured limits: 431.
        case headerFieldsTooLarge
        /// The body exceeds the route's limit: 413.
        case contentTooLarge
        /// The method is not one the server knows: 501.
        case notImplemented
        /// The HTTP major version is not 1: 505.
        case versionNotSupported
        /// An `Expect` other than `100-continue`: 417.
        case expectationFailed
        /// No route matches the path: 404.
        case notFound
        /// A route matches the path but not the method: 405.
        case methodNotAllowed
        /// The client was too slow sending the request: 408.
        case requestTimeout
        /// The server is at its connection cap or shutting down: 503.
        case unavailable
        /// A handler failed: 500.
        case internalError
        /// A socket call failed (bind, listen, ...); never sent to a client.
        case io
    }

    /// What went wrong.
    public var code: Code
    /// A message for the person reading the problem document or the log.
    public var message: String

    /// Creates an error with a code and a message.
    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    /// The HTTP status a client receives for this error.
    public var status: Int {
        switch code {
        case .badRequest: 400
        case .uriTooLong: 414
        case .headerFieldsTooLarge: 431
        case .contentTooLarge: 413
        case .notImplemented: 501
        case .versionNotSupported: 505
        case .expectationFailed: 417
        case .notFound: 404
        case .methodNotAllowed: 405
        case .requestTimeout: 408
        case .unavailable: 503
        case .internalError, .io: 500
        }
    }

    /// `code: message`.
    public var description: String { "\(code): \(message)" }
}
