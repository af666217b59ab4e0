/// A content coding this server can apply to a response body (RFC 9110 §8.4.1), spelled as the
/// `Content-Encoding` token. A value type.
public enum ContentCoding: String, Sendable {
    /// gzip (RFC 1952), produced by ``GzipEncoder``.
    case gzip
    /// No transformation.
    case identity
}
