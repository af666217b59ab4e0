public import HTTPServer
import SystemKit

/// One file of the web page, embedded in the binary: its bytes, a gzip copy made once, and the entity tags of both.
///
/// An immutable value built once when the routes are registered; `response(to:)` is pure and runs on any shard
/// queue.
public struct WebAsset: Sendable {
    /// The `Content-Type` field value, with its charset.
    public let contentType: String
    /// The bytes as written.
    public let bytes: [UInt8]
    /// The same bytes gzip-compressed (RFC 1952), sent to clients that accept gzip.
    public let gzipBytes: [UInt8]
    /// The strong entity tag of `bytes`: a hash of the content, so it changes whenever the content does.
    public let entityTag: String
    /// The strong entity tag of the gzip representation (a different representation has a different tag).
    public let gzipEntityTag: String

    /// How long caches may keep the asset before asking again with `If-None-Match`: always revalidate, so a new
    /// binary's page is seen at once while an unchanged one costs a 304.
    static let cacheControl = "no-cache"

    /// Only this origin may provide scripts, styles, images, fonts and connections; no plugins, no framing, no
    /// `<base>` tricks, forms post only here.
    public static let contentSecurityPolicy =
        "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; "
        + "object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"

    /// Wraps `text` served as `contentType`.
    public init(_ text: String, contentType: String) {
        self.contentType = contentType
        bytes = Array(text.utf8)
        gzipBytes = GzipEncoder(configuration: .body).compress(bytes, flush: .finish)
        // The product's one FNV-1a: enough to tell two versions of a file apart, not a security hash.
        let hash = StateChecksum.hex(StateChecksum.of(bytes))
        entityTag = "\"\(hash)\""
        gzipEntityTag = "\"\(hash)-gzip\""
    }

    /// The answer to a GET or HEAD of this asset: 304 when `If-None-Match` names either representation,
    /// otherwise 200 with the gzip bytes when the client prefers gzip, else the plain bytes.
    public func response(to request: Request) -> Response {
        let gzip = AcceptEncoding.preferred(request.headers["accept-encoding"]) == .gzip
        let tag = gzip ? gzipEntityTag : entityTag
        var headers = HTTPHeaders([
            ("ETag", tag),
            ("Cache-Control", Self.cacheControl),
            ("Vary", "Accept-Encoding"),
        ])
        if let tags = request.headers["if-none-match"], matches(tags) {
            return Response(status: 304, headers: headers)
        }
        headers.add(name: "Content-Type", value: contentType)
        headers.add(name: "Content-Security-Policy", value: Self.contentSecurityPolicy)
        headers.add(name: "X-Content-Type-Options", value: "nosniff")
        headers.add(name: "Referrer-Policy", value: "no-referrer")
        if gzip { headers.add(name: "Content-Encoding", value: "gzip") }
        return Response(status: 200, headers: headers, body: gzip ? gzipBytes : bytes)
    }

    /// Whether an `If-None-Match` value names this asset: `*`, or either representation's tag, compared weakly
    /// as RFC 9110 §13.1.2 asks.
    func matches(_ header: String) -> Bool {
        for element in header.split(separator: ",") {
            var tag = Substring(element).trimmingSpaces()
            if tag == "*" { return true }
            if tag.hasPrefix("W/") { tag = tag.dropFirst(2) }
            if tag == entityTag || tag == gzipEntityTag { return true }
        }
        return false
    }
}
