import CCurl
import Upstream

/// One request in flight: a libcurl easy handle, its header list and error buffer, its state machine and the
/// continuations waiting for it.
///
/// Concurrency: every member is owned by the client's queue (``MultiDriver/queue``); libcurl calls the write and
/// header callbacks on that queue too, from inside `curl_multi_socket_action` or `curl_easy_pause`. The class is
/// `@unchecked Sendable` only so that tasks can hand it to that queue.
final class Transfer: @unchecked Sendable {
    let request: UpstreamRequest
    private(set) var machine: TransferStateMachine
    /// The easy handle while it is attached to the multi handle.
    private(set) var easy: UnsafeMutableRawPointer?
    private var headerList: UnsafeMutablePointer<curl_slist>?
    private let errorBuffer: UnsafeMutablePointer<CChar>
    private(set) var followsRedirects = false
    /// Set when cancellation arrived before the transfer started.
    var cancelRequested = false
    /// Set by the driver when it handles the transfer's start.
    var started = false
    /// When the transfer was added to the multi handle, in uptime nanoseconds.
    var startedAt: UInt64 = 0

    var fetchContinuation: CheckedContinuation<UpstreamResponse, any Error>?
    var headContinuation: CheckedContinuation<UpstreamHead, any Error>?
    var readerContinuation: CheckedContinuation<[UInt8]?, any Error>?

    init(request: UpstreamRequest, mode: TransferStateMachine.Mode) {
        self.request = request
        self.machine = TransferStateMachine(mode: mode)
        self.errorBuffer = .allocate(capacity: Int(CURL_ERROR_SIZE) + 1)
        self.errorBuffer.initialize(repeating: 0, count: Int(CURL_ERROR_SIZE) + 1)
    }

    deinit {
        // Only memory: the easy handle is always released by `releaseEasy()` on the queue before this.
        errorBuffer.deallocate()
    }

    /// Creates and configures the easy handle. Throws ``UpstreamError`` when the request is unusable.
    func makeEasy(configuration: CurlFetcher.Configuration, driver: MultiDriver) throws(UpstreamError) {
        guard let handle = curl_easy_init() else {
            throw UpstreamError(.other, "libcurl could not create a transfer handle for \(request.url).")
        }
        easy = handle
        let streaming: Bool
        if case .streaming = machine.mode { streaming = true } else { streaming = false }
        followsRedirects = configuration.maxRedirects > 0
        do throws(UpstreamError) {
            try EasyOptions(handle: handle, url: request.url).apply(
                request: request,
                configuration: configuration,
                streaming: streaming,
                transfer: Unmanaged.passUnretained(self).toOpaque(),
                driver: Unmanaged.passUnretained(driver).toOpaque(),
                errorBuffer: errorBuffer,
                headerList: &headerList
            )
        } catch {
            releaseEasy()
            throw error
        }
    }

    /// Frees the easy handle and its header list. The caller removed it from the multi handle first.
    func releaseEasy() {
        if let easy { curl_easy_cleanup(easy) }
        easy = nil
        if let headerList { curl_slist_free_all(headerList) }
        headerList = nil
    }

    /// libcurl's detail message for the last failure, if it wrote one.
    var curlDetail: String {
        let text = String(cString: errorBuffer)
        return text
    }

    // MARK: events from libcurl (write and header callbacks)

    func receivedHeaderLine(_ line: UnsafeRawBufferPointer) {
        let action = machine.receivedHeaderLine(line, url: currentURL, followsRedirects: followsRedirects)
        if case .deliverHead(let head) = action {
            headContinuation?.resume(returning: head)
            headContinuation = nil
        }
    }

    func receivedBody(_ bytes: UnsafeRawBufferPointer) -> Int {
        switch machine.receivedBody(bytes) {
        case .accept:
            return bytes.count
        case .acceptAndDeliver(let chunk):
            readerContinuation?.resume(returning: chunk)
            readerContinuation = nil
            return bytes.count
        case .pause:
            return Int(fh_write_function_pause())
        case .abort:
            return 0
        }
    }

    /// The URL libcurl is fetching now (after redirects).
    var currentURL: String {
        guard let easy else { return request.url }
        var pointer: UnsafeMutableRawPointer?
        guard fh_easy_getinfo_pointer(easy, CURLINFO_EFFECTIVE_URL, &pointer) == CURLE_OK, let pointer else {
            return request.url
        }
        return String(cString: pointer.assumingMemoryBound(to: CChar.self))
    }

    /// The final status code libcurl saw, or 0.
    var responseCode: Int {
        guard let easy else { return 0 }
        var code = 0
        guard fh_easy_getinfo_long(easy, CURLINFO_RESPONSE_CODE, &code) == CURLE_OK else { return 0 }
        return code
    }

    // MARK: completion and the reader

    /// Ends the transfer and resumes whoever waits. Call before `releaseEasy()` so status and URL can be read.
    func complete(error: UpstreamError?) {
        let action = machine.completed(error: error, status: responseCode, url: currentURL)
        switch action {
        case .none:
            break
        case .finishFetch(let result):
            fetchContinuation?.resume(with: result)
            fetchContinuation = nil
        case .failHead(let error):
            headContinuation?.resume(throwing: error)
            headContinuation = nil
        case .finishReader(let error):
            resumeReader(error: error)
        }
    }

    /// The stream's reader asks for the next chunk.
    func readNext(_ continuation: CheckedContinuation<[UInt8]?, any Error>) {
        guard readerContinuation == nil else {
            let message = "Another task is already reading the stream from \(request.url); read it from one task."
            continuation.resume(throwing: UpstreamError(.invalidRequest, message))
            return
        }
        switch machine.readerWantsChunk() {
        case .deliver(let chunk, let unpause):
            continuation.resume(returning: chunk)
            if unpause { resumeTransfer() }
        case .wait(let unpause):
            readerContinuation = continuation
            if unpause { resumeTransfer() }
        case .finish(let error):
            if let error {
                continuation.resume(throwing: error)
            } else {
                continuation.resume(returning: nil)
            }
        }
    }

    private func resumeReader(error: UpstreamError?) {
        guard let continuation = readerContinuation else { return }
        readerContinuation = nil
        if let error {
            continuation.resume(throwing: error)
        } else {
            continuation.resume(returning: nil)
        }
    }

    private func resumeTransfer() {
        // May call the write callback at once with the data held since the pause.
        if let easy { _ = curl_easy_pause(easy, fh_pause_continue()) }
    }
}
