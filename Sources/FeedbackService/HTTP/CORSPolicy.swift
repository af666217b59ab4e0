/// Which browser origins may call the API, and the CORS headers that say so.
///
/// An allow-list of exact origins (`https://app.example.com`); none by default, so no cross-origin page can read
/// the API unless configured. Credentials are never combined with `*`: the allowed origin is echoed, and every
/// answer that depends on `Origin` carries `Vary: Origin`. An immutable value, safe to share.
public struct CORSPolicy: Sendable, Equatable {
    /// The allowed origins, compared exactly (scheme, host and port, no trailing slash).
    public let allowedOrigins: Set<String>
    /// Methods a preflight may allow.
    public let allowedMethods: [String]
    /// Request headers a preflight may allow, lowercased.
    public let allowedHeaders: Set<String>
    /// Response headers a page may read.
    public let exposedHeaders: [String]
    /// How long a browser may cache a preflight, in seconds.
    public let maxAge: Int

    /// Creates a policy.
    public init(
        allowedOrigins: Set<String> = [],
        allowedMethods: [String] = ["GET", "POST", "PUT", "DELETE"],
        allowedHeaders: Set<String> = [
            "content-type", "idempotency-key", "if-match", "if-none-match", "last-event-id", "authorization",
            "client-id", "client-sequence",
        ],
        exposedHeaders: [String] = ["ETag", "Location", "Retry-After", "WWW-Authenticate"],
        maxAge: Int = 600
    ) {
        self.allowedOrigins = allowedOrigins
        self.allowedMethods = allowedMethods
        self.allowedHeaders = allowedHeaders
        self.exposedHeaders = exposedHeaders
        self.maxAge = maxAge
    }

    /// Whether `origin` is on the allow-list.
    public func allows(origin: String) -> Bool {
        allowedOrigins.contains(origin)
    }

    /// Headers for an ordinary (non-preflight) answer to a request from `origin`.
    public func responseHeaders(origin: String?) -> [(String, String)] {
        guard !allowedOrigins.isEmpty else { return [] }
        guard let origin, allows(origin: origin) else { return [("Vary", "Origin")] }
        return [
            ("Access-Control-Allow-Origin", origin),
            ("Access-Control-Allow-Credentials", "true"),
            ("Access-Control-Expose-Headers", exposedHeaders.joined(separator: ", ")),
            ("Vary", "Origin"),
        ]
    }

    /// The outcome of an `OPTIONS` preflight.
    public enum Preflight: Sendable, Equatable {
        /// Allowed: answer 204 with these headers.
        case allowed([Header])
        /// Refused: answer 403 with this reason for a person.
        case refused(String)
    }

    /// A header name and value; a struct so that `Preflight` can be `Equatable`.
    public struct Header: Sendable, Equatable {
        /// The header's name.
        public let name: String
        /// The header's value.
        public let value: String
    }

    /// Answers a preflight: `Origin`, `Access-Control-Request-Method` and `Access-Control-Request-Headers`.
    public func preflight(origin: String?, method: String?, headers: String?) -> Preflight {
        guard let origin, allows(origin: origin) else {
            return .refused("origin \(origin ?? "(none)") is not allowed; allowed origins are set by --cors-origins")
        }
        guard let method, allowedMethods.contains(method) else {
            return .refused(
                "method \(method ?? "(none)") is not allowed; allowed: \(allowedMethods.joined(separator: ", "))"
            )
        }
        let requested = (headers ?? "").split(separator: ",").map { $0.trimmingSpaces().lowercased() }
            .filter { !$0.isEmpty }
        if let refused = requested.first(where: { !allowedHeaders.contains($0) }) {
            return .refused(
                "request header \(refused) is not allowed; allowed: \(allowedHeaders.sorted().joined(separator: ", "))"
            )
        }
        return .allowed([
            Header(name: "Access-Control-Allow-Origin", value: origin),
            Header(name: "Access-Control-Allow-Credentials", value: "true"),
            Header(name: "Access-Control-Allow-Methods", value: allowedMethods.joined(separator: ", ")),
            Header(name: "Access-Control-Allow-Headers", value: requested.joined(separator: ", ")),
            Header(name: "Access-Control-Max-Age", value: String(maxAge)),
            Header(name: "Vary", value: "Origin"),
        ])
    }
}
