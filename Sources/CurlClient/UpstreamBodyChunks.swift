import Upstream

/// A stream's body as byte chunks, in arrival order. Throws ``UpstreamError``.
///
/// Iterate it from one task at a time; each `next()` hops to the client's queue.
public struct UpstreamBodyChunks: AsyncSequence, Sendable {
    /// Each element is one piece of the body as libcurl delivered it.
    public typealias Element = [UInt8]

    let source: StreamSource

    /// Returns the iterator.
    public func makeAsyncIterator() -> Iterator {
        Iterator(source: source)
    }

    /// Pulls the next chunk from the transfer; nil at the end of the body.
    public struct Iterator: AsyncIteratorProtocol {
        let source: StreamSource

        /// The next chunk, or nil at the end of the body.
        public mutating func next() async throws -> [UInt8]? {
            try await source.next()
        }
    }
}

/// A stream's body as text lines split at LF, without line endings. Throws ``UpstreamError``.
///
/// Enough to read server-sent events: `data:` lines and the empty line that ends each event.
public struct UpstreamBodyLines: AsyncSequence, Sendable {
    /// Each element is one line decoded as UTF-8 (invalid sequences replaced).
    public typealias Element = String

    let chunks: UpstreamBodyChunks
    let maxLineBytes: Int

    /// Returns the iterator.
    public func makeAsyncIterator() -> Iterator {
        Iterator(chunks: chunks.makeAsyncIterator(), maxLineBytes: maxLineBytes)
    }

    /// Splits chunks into lines.
    public struct Iterator: AsyncIteratorProtocol {
        var chunks: UpstreamBodyChunks.Iterator
        let maxLineBytes: Int
        var splitter = LineSplitter()
        var ended = false

        /// The next line, or nil at the end of the body.
        public mutating func next() async throws -> String? {
            while true {
                if let line = splitter.nextLine() {
                    return String(decoding: line, as: UTF8.self)
                }
                if ended { return nil }
                if splitter.pendingBytes > maxLineBytes {
                    throw UpstreamError(.tooLarge, "A streamed line is longer than \(maxLineBytes) bytes.")
                }
                if let chunk = try await chunks.next() {
                    splitter.append(chunk)
                } else {
                    ended = true
                    splitter.finish()
                }
            }
        }
    }
}
