import CCurl
import Dispatch
import Logging
import Upstream

/// The engine behind ``CurlFetcher``: one long-lived libcurl multi handle driven by the socket interface.
///
/// libcurl's sockets are watched by DispatchSources (``SocketWatcher``) and its timeouts by one
/// DispatchSourceTimer; every readiness event becomes one `curl_multi_socket_action` call. No thread per request.
///
/// Concurrency: the serial `queue` owns everything here: the multi handle, the transfers, the sockets, the timer.
/// Every method except `init` must run on it (`dispatchPrecondition`); libcurl's callbacks run on it because
/// libcurl only calls them from inside calls made on it. The class is `@unchecked Sendable` so the client can
/// hand work to the queue. The multi handle is released by ``shutdown(_:)`` only, never from `deinit`.
final class MultiDriver: @unchecked Sendable {
    enum Phase {
        case running
        case shuttingDown
        case shutDown
    }

    let queue: DispatchQueue
    let configuration: CurlFetcher.Configuration
    let logger: Logger
    private var multi: UnsafeMutableRawPointer?
    private var transfers: [UnsafeMutableRawPointer: Transfer] = [:]
    private let timer: any DispatchSourceTimer
    private var timerCancelled = false
    private var sockets: SocketWatcher!
    private(set) var phase = Phase.running
    private var shutdownWaiters: [CheckedContinuation<Void, Never>] = []

    let metrics: UpstreamMetrics

    init(configuration: CurlFetcher.Configuration, logger: Logger, metrics: UpstreamMetrics) {
        let queue = DispatchQueue(label: "FeedbackHost.CurlClient")
        self.queue = queue
        self.configuration = configuration
        self.logger = logger
        self.metrics = metrics
        self.timer = DispatchSource.makeTimerSource(queue: queue)
        self.multi = curl_multi_init()
        self.sockets = SocketWatcher(queue: queue) { [unowned self] fd, flags in
            self.socketAction(fd, flags)
        }
        sockets.onLastSocketGone = { [unowned self] in self.finishShutdownIfDone() }
        timer.setEventHandler { [unowned self] in self.socketAction(fh_socket_timeout(), 0) }
        timer.setCancelHandler { [unowned self] in
            self.timerCancelled = true
            self.finishShutdownIfDone()
        }
        timer.schedule(deadline: .distantFuture, repeating: .never)
        timer.resume()

        let userp = Unmanaged.passUnretained(self).toOpaque()
        fh_multi_setopt_socket_function(multi, multiSocketCallback)
        fh_multi_setopt_pointer(multi, CURLMOPT_SOCKETDATA, userp)
        fh_multi_setopt_timer_function(multi, multiTimerCallback)
        fh_multi_setopt_pointer(multi, CURLMOPT_TIMERDATA, userp)
        fh_multi_setopt_long(multi, CURLMOPT_MAX_HOST_CONNECTIONS, configuration.maxConnectionsPerHost)
        fh_multi_setopt_long(multi, CURLMOPT_MAX_TOTAL_CONNECTIONS, configuration.maxConnectionsTotal)
        fh_multi_setopt_long(multi, CURLMOPT_MAXCONNECTS, configuration.maxIdleConnections)
    }

    /// How many transfers are attached to the multi handle.
    var activeTransfers: Int {
        dispatchPrecondition(condition: .onQueue(queue))
        return transfers.count
    }

    /// How many attached transfers are paused because their reader fell behind.
    var pausedTransfers: Int {
        dispatchPrecondition(condition: .onQueue(queue))
        return transfers.values.filter { $0.machine.isPaused }.count
    }

    /// How many sockets are watched or waiting for a safe close.
    var watchedSockets: Int {
        dispatchPrecondition(condition: .onQueue(queue))
        return sockets.count
    }

    // MARK: transfers

    /// Starts a transfer whose continuation is already stored in it.
    func start(_ transfer: Transfer) {
        dispatchPrecondition(condition: .onQueue(queue))
        transfer.started = true
        guard phase == .running, let multi else {
            transfer.complete(
                error: UpstreamError(
                    .shutdown,
                    "The client was shut down; \(transfer.request.url) was not requested."
                )
            )
            return
        }
        if transfer.cancelRequested {
            transfer.complete(
                error: UpstreamError(.cancelled, "The request to \(transfer.request.url) was cancelled.")
            )
            return
        }
        do {
            try transfer.makeEasy(configuration: configuration, driver: self)
        } catch {
            transfer.complete(error: error)
            return
        }
        guard let easy = transfer.easy else { return }
        transfer.startedAt = DispatchTime.now().uptimeNanoseconds
        let code = curl_multi_add_handle(multi, easy)
        guard code == CURLM_OK else {
            let reason = String(cString: curl_multi_strerror(code))
            transfer.releaseEasy()
            transfer.complete(
                error: UpstreamError(.other, "libcurl could not start \(transfer.request.url): \(reason).")
            )
            return
        }
        transfers[easy] = transfer
    }

    /// Cancels a transfer: removes it from the multi handle at once (its connection is closed) and fails its waiters.
    func cancel(_ transfer: Transfer) {
        dispatchPrecondition(condition: .onQueue(queue))
        guard transfer.started else {
            // Cancelled before `start` ran: `start` fails it.
            transfer.cancelRequested = true
            return
        }
        guard let easy = transfer.easy, transfers[easy] != nil else {
            // Already finished; a stream's reader may still read what was buffered.
            return
        }
        detach(
            easy,
            transfer,
            error: UpstreamError(.cancelled, "The request to \(transfer.request.url) was cancelled.")
        )
    }

    /// Asks a stream's transfer for its next chunk.
    func readNext(_ transfer: Transfer, _ continuation: CheckedContinuation<[UInt8]?, any Error>) {
        dispatchPrecondition(condition: .onQueue(queue))
        transfer.readNext(continuation)
    }

    private func detach(_ easy: UnsafeMutableRawPointer, _ transfer: Transfer, error: UpstreamError?) {
        transfers[easy] = nil
        if let multi { curl_multi_remove_handle(multi, easy) }
        metrics.record(
            status: transfer.responseCode,
            error: error,
            nanoseconds: DispatchTime.now().uptimeNanoseconds &- transfer.startedAt
        )
        transfer.complete(error: error)
        transfer.releaseEasy()
    }

    // MARK: libcurl's requests

    func socketAction(_ fd: Int32, _ flags: Int32) {
        dispatchPrecondition(condition: .onQueue(queue))
        guard let multi else { return }
        var running: Int32 = 0
        curl_multi_socket_action(multi, fd, flags, &running)
        collectFinishedTransfers()
    }

    private func collectFinishedTransfers() {
        guard let multi else { return }
        var left: Int32 = 0
        while let message = curl_multi_info_read(multi, &left) {
            guard message.pointee.msg == CURLMSG_DONE, let easy = message.pointee.easy_handle,
                let transfer = transfers[easy]
            else { continue }
            let code = fh_message_result(message)
            let error = UpstreamError.from(curlCode: code, url: transfer.currentURL, detail: transfer.curlDetail)
            if let error {
                logger.debug(
                    "upstream transfer failed",
                    metadata: ["upstream.url": "\(transfer.request.url)", "error": "\(error)"]
                )
            }
            detach(easy, transfer, error: error)
        }
    }

    fileprivate func curlWantsSocket(_ fd: Int32, _ what: Int32) {
        sockets.update(socket: fd, what: what)
    }

    fileprivate func curlWantsTimeout(milliseconds: Int) {
        if milliseconds < 0 {
            timer.schedule(deadline: .distantFuture, repeating: .never)
        } else {
            timer.schedule(deadline: .now() + .milliseconds(milliseconds), repeating: .never, leeway: .milliseconds(1))
        }
    }

    func curlClosesSocket(_ fd: Int32) {
        dispatchPrecondition(condition: .onQueue(queue))
        sockets.curlCloses(socket: fd)
    }

    // MARK: shutdown

    /// Fails every transfer with a shutdown error, releases the multi handle, and resumes `done` once every
    /// socket is closed and the timer is cancelled. Safe to call more than once.
    func shutdown(_ done: CheckedContinuation<Void, Never>) {
        dispatchPrecondition(condition: .onQueue(queue))
        shutdownWaiters.append(done)
        guard phase == .running else {
            finishShutdownIfDone()
            return
        }
        phase = .shuttingDown
        logger.debug("curl client shutting down", metadata: ["transfers": "\(transfers.count)"])
        for (easy, transfer) in transfers {
            let error = UpstreamError(.shutdown, "The client shut down while \(transfer.request.url) was in flight.")
            detach(easy, transfer, error: error)
        }
        if let multi {
            // Closes the idle connections through the close-socket callback.
            curl_multi_cleanup(multi)
        }
        multi = nil
        sockets.cancelAll()
        timer.cancel()
        finishShutdownIfDone()
    }

    private func finishShutdownIfDone() {
        if phase == .shuttingDown, timerCancelled, sockets.isEmpty {
            phase = .shutDown
        }
        guard phase == .shutDown else { return }
        let waiters = shutdownWaiters
        shutdownWaiters = []
        for waiter in waiters { waiter.resume() }
    }
}

private let multiSocketCallback: curl_socket_callback = { _, socket, what, userp, _ in
    let driver = Unmanaged<MultiDriver>.fromOpaque(userp!).takeUnretainedValue()
    driver.curlWantsSocket(socket, what)
    return 0
}

private let multiTimerCallback: curl_multi_timer_callback = { _, milliseconds, userp in
    let driver = Unmanaged<MultiDriver>.fromOpaque(userp!).takeUnretainedValue()
    driver.curlWantsTimeout(milliseconds: milliseconds)
    return 0
}
