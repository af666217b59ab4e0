import Dispatch
public import Upstream

/// A response whose body arrives as it is received: the head first, then ``chunks`` or ``lines``.
///
/// Read the body from one task, through one of the two sequences, once. A reader that stops early calls
/// ``cancel()`` so the transfer and its connection are released; reading to the end releases them too.
/// Concurrency: the value can be passed between tasks; the transfer behind it is owned by the client's queue.
public struct UpstreamStream: Sendable {
    /// The status code, header fields and URL.
    public let head: UpstreamHead
    let source: StreamSource

    init(head: UpstreamHead, source: StreamSource) {
        self.head = head
        self.source = source
    }

    /// The HTTP status code.
    public var status: Int { head.status }
    /// The response header fields.
    public var headers: UpstreamHeaders { head.headers }

    /// The body as byte chunks in arrival order (decoded when the upstream encoded it).
    public var chunks: UpstreamBodyChunks { UpstreamBodyChunks(source: source) }

    /// The body as lines split at LF, without the line ending (a trailing CR is dropped too).
    /// A last line without a line ending is delivered at the end. Lines longer than `maxLineBytes` fail with
    /// ``UpstreamError/Code/tooLarge``.
    public var lines: UpstreamBodyLines {
        UpstreamBodyLines(chunks: chunks, maxLineBytes: source.driver.configuration.maxLineBytes)
    }

    /// Stops the transfer and closes its connection; a waiting reader gets ``UpstreamError/Code/cancelled``.
    public func cancel() {
        source.cancel()
    }
}

/// The link between a stream's sequences and its transfer on the client's queue.
struct StreamSource: Sendable {
    let driver: MultiDriver
    let transfer: Transfer

    func next() async throws -> [UInt8]? {
        let driver = self.driver
        let transfer = self.transfer
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                driver.queue.async { driver.readNext(transfer, continuation) }
            }
        } onCancel: {
            driver.queue.async { driver.cancel(transfer) }
        }
    }

    func cancel() {
        let driver = self.driver
        let transfer = self.transfer
        driver.queue.async { driver.cancel(transfer) }
    }
}
