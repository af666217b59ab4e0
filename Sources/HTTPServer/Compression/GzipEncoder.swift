import CZlib

/// A streaming gzip compressor (RFC 1952 framing around a deflate stream) over zlib.
///
/// One encoder compresses one response body. Feed it chunks with ``compress(_:flush:)``:
/// `.none` lets zlib buffer, `.sync` (one per server-sent event) emits everything so far as bytes a
/// client can decode at once, `.finish` ends the stream with the gzip trailer. The encoder cannot
/// be used after `.finish`.
///
/// Memory: zlib documents that deflate needs `(1 << (windowBits + 2)) + (1 << (memLevel + 9))`
/// bytes plus its state (about 6 KiB on 64-bit). ``Configuration/body`` (15, 8) is 262,144 bytes
/// by that formula; ``Configuration/streaming`` (10, 2) is 6,144. Measured on Debian 12 x86-64
/// (zlib 1.2.13, glibc malloc, Swift 6.3.1 -O) with 1,000 live encoders: glibc `mallinfo2` in-use
/// bytes grow by 268,375 per `body` encoder and 12,374 per `streaming` encoder; resident memory
/// grows by 84,033 and 8,282 bytes per encoder when idle, 88,788 and 8,282 after one sync-flushed
/// event (zlib touches the window only as it fills it, so a long `body` stream approaches the
/// allocated figure). The encoder keeps no buffer of its own between calls.
///
/// Concurrency: not `Sendable`. One owner (the connection that writes the body, on its queue)
/// creates, uses and releases it; the `z_stream` is heap-allocated so its address never changes.
public final class GzipEncoder {
    /// How much buffering zlib may do before it must emit output.
    public enum Flush: Sendable {
        /// Compress what zlib can and keep the rest buffered (best ratio).
        case none
        /// Emit everything fed so far, ending on a byte boundary (`Z_SYNC_FLUSH`), so the client
        /// can decode it without waiting for more.
        case sync
        /// Emit everything and the gzip trailer (`Z_FINISH`); the stream is complete.
        case finish
    }

    /// zlib's tuning for one encoder.
    public struct Configuration: Sendable, Equatable {
        /// Compression level, 0 (store) ... 9 (smallest output).
        public var level: Int
        /// Base-2 logarithm of the history window, 9...15 (gzip framing is added internally).
        public var windowBits: Int
        /// Memory for the internal match state, 1...9.
        public var memLevel: Int

        /// Creates a configuration; traps on values outside zlib's ranges.
        public init(level: Int = 6, windowBits: Int = 15, memLevel: Int = 8) {
            precondition((0...9).contains(level), "gzip level must be 0...9")
            precondition((9...15).contains(windowBits), "gzip windowBits must be 9...15")
            precondition((1...9).contains(memLevel), "gzip memLevel must be 1...9")
            self.level = level
            self.windowBits = windowBits
            self.memLevel = memLevel
        }

        /// For a whole response body: zlib's defaults (level 6, windowBits 15, memLevel 8), 256 KiB.
        public static let body = Configuration()
        /// For a long-lived stream (one per SSE subscriber): windowBits 10, memLevel 2, 6 KiB by
        /// zlib's formula, at some cost in ratio for repetitive payloads.
        public static let streaming = Configuration(level: 6, windowBits: 10, memLevel: 2)

        /// The bytes zlib's documented formula gives for deflate's buffers (state not included).
        public var documentedBufferBytes: Int {
            (1 << (windowBits + 2)) + (1 << (memLevel + 9))
        }
    }

    /// The configuration this encoder was created with.
    public let configuration: Configuration
    /// Whether ``compress(_:flush:)`` was called with `.finish`.
    public private(set) var isFinished = false

    private let stream: UnsafeMutablePointer<z_stream>

    /// Creates an encoder; traps if zlib cannot initialise (only out of memory or a zlib mismatch).
    public init(configuration: Configuration = .body) {
        self.configuration = configuration
        stream = .allocate(capacity: 1)
        stream.initialize(to: z_stream())
        let status = deflateInit2_(
            stream,
            Int32(configuration.level),
            Z_DEFLATED,
            Int32(configuration.windowBits + 16),
            Int32(configuration.memLevel),
            Z_DEFAULT_STRATEGY,
            zlibVersion(),
            Int32(MemoryLayout<z_stream>.size)
        )
        precondition(status == Z_OK, "deflateInit2 failed with status \(status)")
    }

    deinit {
        deflateEnd(stream)
        stream.deinitialize(count: 1)
        stream.deallocate()
    }

    /// Compresses `bytes` and returns the compressed bytes zlib emits now (may be empty for `.none`).
    public func compress(_ bytes: some Collection<UInt8>, flush: Flush) -> [UInt8] {
        if let output = bytes.withContiguousStorageIfAvailable({ compress(UnsafeRawBufferPointer($0), flush: flush) }) {
            return output
        }
        return Array(bytes).withUnsafeBytes { compress($0, flush: flush) }
    }

    /// Compresses the bytes at `bytes` and returns the compressed bytes zlib emits now.
    public func compress(_ bytes: UnsafeRawBufferPointer, flush: Flush) -> [UInt8] {
        precondition(!isFinished, "GzipEncoder used after .finish")
        let mode: Int32
        switch flush {
        case .none: mode = Z_NO_FLUSH
        case .sync: mode = Z_SYNC_FLUSH
        case .finish: mode = Z_FINISH
        }
        // zlib never writes through next_in; the mutable pointer is its C signature only.
        stream.pointee.next_in = UnsafeMutablePointer(
            mutating: bytes.baseAddress?.assumingMemoryBound(to: UInt8.self)
        )
        stream.pointee.avail_in = UInt32(bytes.count)
        defer {
            stream.pointee.next_in = nil
            stream.pointee.avail_in = 0
        }
        // No buffer lives between calls (it would cost as much as a small zlib state): each call
        // writes into arrays sized by deflateBound, which usually takes one.
        var capacity = min(Int(deflateBound(stream, UInt(bytes.count))), 64 * 1024)
        var output: [UInt8] = []
        while true {
            var status = Z_OK
            let chunk = [UInt8](unsafeUninitializedCapacity: capacity) { buffer, count in
                stream.pointee.next_out = buffer.baseAddress
                stream.pointee.avail_out = UInt32(buffer.count)
                status = deflate(stream, mode)
                count = buffer.count - Int(stream.pointee.avail_out)
                stream.pointee.next_out = nil
                stream.pointee.avail_out = 0
            }
            let filled = chunk.count == capacity
            if output.isEmpty {
                output = chunk
            } else {
                output.append(contentsOf: chunk)
            }
            if status == Z_STREAM_END {
                isFinished = true
                return output
            }
            // Z_BUF_ERROR only means "no progress was possible"; the check below ends the loop then.
            precondition(status == Z_OK || status == Z_BUF_ERROR, "deflate failed with status \(status)")
            if !filled && stream.pointee.avail_in == 0 && mode != Z_FINISH {
                return output
            }
            capacity = min(capacity * 2, 256 * 1024)
        }
    }
}
