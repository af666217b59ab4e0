import Upstream

/// The lifecycle of one transfer as a value: events in, actions out.
///
/// The shell (``Transfer``) feeds it what libcurl and the reader report and performs the actions it returns:
/// resuming continuations, pausing or resuming the transfer, aborting it. It owns no C resource and no
/// continuation, so tests drive it directly. Owned by its transfer, on the client's queue.
struct TransferStateMachine {
    enum Mode: Equatable {
        /// Collect the whole body for ``CurlFetcher/fetch(_:)``, up to a cap.
        case buffered(maxBodyBytes: Int)
        /// Hand the body to a reader chunk by chunk, pausing the transfer when this many bytes wait unread.
        case streaming(bufferBytes: Int)
    }

    /// What the write callback must answer libcurl.
    enum BodyAction: Equatable {
        case accept
        /// Accepted, and the waiting reader takes this chunk now.
        case acceptAndDeliver([UInt8])
        /// Not accepted: libcurl keeps the data and the transfer pauses until ``readerWantsChunk()`` unpauses it.
        case pause
        /// Not accepted: the body is over its cap; libcurl ends the transfer with a write error.
        case abort
    }

    /// What the shell does when a header line arrived.
    enum HeadAction: Equatable {
        case none
        /// A stream's final head is known: resume the waiting ``CurlFetcher/stream(_:)`` call.
        case deliverHead(UpstreamHead)
    }

    /// What the shell does when libcurl finished the transfer or it was cancelled.
    enum CompletionAction: Equatable {
        case none
        /// Resume the waiting ``CurlFetcher/fetch(_:)``.
        case finishFetch(Result<UpstreamResponse, UpstreamError>)
        /// Resume the waiting ``CurlFetcher/stream(_:)``: it never got a head.
        case failHead(UpstreamError)
        /// Resume the waiting stream reader with the end of the body (nil) or an error.
        case finishReader(UpstreamError?)
    }

    /// What the shell does when the stream's reader asks for the next chunk.
    enum ReaderAction: Equatable {
        /// Hand over this chunk; when `unpause`, resume the paused transfer afterwards.
        case deliver([UInt8], unpause: Bool)
        /// Nothing buffered: keep the reader waiting; when `unpause`, resume the paused transfer.
        case wait(unpause: Bool)
        /// The body ended (nil) or failed.
        case finish(UpstreamError?)
    }

    let mode: Mode
    private var parser = HeadParser()
    private var headDelivered = false
    private var body: [UInt8] = []
    private var pending: [[UInt8]] = []
    private var pendingStart = 0
    private var pendingBytes = 0
    private var paused = false
    private var readerWaiting = false
    private var overCap = false
    /// Set once the transfer ended; `.some(nil)` is a clean end.
    private var ending: UpstreamError??
    private var endingDelivered = false

    init(mode: Mode) {
        self.mode = mode
    }

    /// True once the transfer ended (completed, failed or cancelled).
    var isFinished: Bool { ending != nil }

    /// True while libcurl holds the transfer paused because the reader fell behind.
    var isPaused: Bool { paused }

    mutating func receivedHeaderLine(_ line: UnsafeRawBufferPointer, url: String, followsRedirects: Bool) -> HeadAction
    {
        guard parser.feed(line), case .streaming = mode, !headDelivered else { return .none }
        let status = parser.status
        if status < 200 { return .none }
        if followsRedirects, (300..<400).contains(status), parser.headers["location"] != nil { return .none }
        headDelivered = true
        return .deliverHead(UpstreamHead(status: status, headers: parser.headers, url: url))
    }

    mutating func receivedBody(_ bytes: UnsafeRawBufferPointer) -> BodyAction {
        guard ending == nil else { return .abort }
        switch mode {
        case .buffered(let cap):
            if body.count + bytes.count > cap {
                overCap = true
                return .abort
            }
            body.append(contentsOf: bytes)
            return .accept
        case .streaming(let bufferBytes):
            if readerWaiting {
                readerWaiting = false
                return .acceptAndDeliver(Array(bytes))
            }
            if pendingBytes >= bufferBytes {
                paused = true
                return .pause
            }
            pending.append(Array(bytes))
            pendingBytes += bytes.count
            return .accept
        }
    }

    /// The transfer ended: `error` is nil on success. `status` and `url` come from libcurl.
    mutating func completed(error: UpstreamError?, status: Int, url: String) -> CompletionAction {
        guard ending == nil else { return .none }
        var error = error
        if overCap {
            if case .buffered(let cap) = mode {
                error = UpstreamError(.tooLarge, "The response body from \(url) is larger than \(cap) bytes.")
            }
        }
        ending = .some(error)
        switch mode {
        case .buffered:
            if let error { return .finishFetch(.failure(error)) }
            let headers = parser.status == 0 ? UpstreamHeaders() : parser.headers
            let head = UpstreamHead(status: status != 0 ? status : parser.status, headers: headers, url: url)
            let response = UpstreamResponse(head: head, body: body)
            body = []
            return .finishFetch(.success(response))
        case .streaming:
            if !headDelivered {
                endingDelivered = true
                return .failHead(
                    error ?? UpstreamError(.badResponse, "The response from \(url) ended without a complete head.")
                )
            }
            if readerWaiting {
                readerWaiting = false
                endingDelivered = true
                return .finishReader(error)
            }
            return .none
        }
    }

    mutating func readerWantsChunk() -> ReaderAction {
        if pendingStart < pending.count {
            let chunk = pending[pendingStart]
            pending[pendingStart] = []
            pendingStart += 1
            pendingBytes -= chunk.count
            if pendingStart == pending.count {
                pending.removeAll(keepingCapacity: true)
                pendingStart = 0
            }
            return .deliver(chunk, unpause: takePause(belowHalf: true))
        }
        if let ending {
            defer { endingDelivered = true }
            return .finish(endingDelivered ? nil : ending)
        }
        readerWaiting = true
        return .wait(unpause: takePause(belowHalf: false))
    }

    /// The reader gave up waiting (its task was cancelled).
    mutating func readerStoppedWaiting() {
        readerWaiting = false
    }

    private mutating func takePause(belowHalf: Bool) -> Bool {
        guard paused, case .streaming(let bufferBytes) = mode else { return false }
        if belowHalf, pendingBytes > bufferBytes / 2 { return false }
        paused = false
        return true
    }
}
