import CCurl
import Dispatch
public import Logging
public import Metrics
public import Upstream

/// An HTTP client for upstream APIs, built on libcurl's multi interface and Dispatch.
///
/// One long-lived multi handle serves every request: connections to the same host are reused, limited per host
/// and in total, and watched by DispatchSources with one timer; there is no thread per request.
///
/// Concurrency: safe to use from any task. All libcurl state is owned by one serial DispatchQueue inside the
/// client; the public methods hand work to that queue and suspend until it answers. Cancelling the calling task
/// removes its transfer at once and closes its connection.
///
/// Lifecycle: call ``shutdown()`` before dropping the last reference. Nothing is cleaned up from `deinit`;
/// a client dropped without ``shutdown()`` leaks its multi handle and its sockets.
public final class CurlFetcher: UpstreamFetching, Sendable {
    /// The limits and timeouts this client applies.
    public let configuration: Configuration
    let driver: MultiDriver

    /// Creates a client and its multi handle. Calls ``initializeLibcurl()`` if nobody did yet. Requests are
    /// counted by outcome and timed through `metricsFactory` (see ``UpstreamMetrics``).
    public init(
        configuration: Configuration = Configuration(),
        logger: Logger = Logger(label: "CurlClient"),
        metricsFactory: any MetricsFactory = MetricsSystem.factory
    ) {
        Self.initializeLibcurl()
        self.configuration = configuration
        self.driver = MultiDriver(
            configuration: configuration,
            logger: logger,
            metrics: UpstreamMetrics(factory: metricsFactory)
        )
    }

    /// Initializes libcurl once for the process (`curl_global_init`); call it early in `main`.
    /// Later calls do nothing.
    public static func initializeLibcurl() {
        _ = globalInitialization
    }

    /// Sends the request and returns the whole response, its body decoded and at most `maxBodyBytes` long.
    ///
    /// An HTTP error status is a response, not an error. Throws ``UpstreamError``.
    public func fetch(_ request: UpstreamRequest) async throws -> UpstreamResponse {
        let transfer = Transfer(request: request, mode: .buffered(maxBodyBytes: configuration.maxBodyBytes))
        return try await run(transfer) { $0.fetchContinuation = $1 }
    }

    /// Sends the request and returns once the response head arrived; read the body from the stream's
    /// ``UpstreamStream/chunks`` or ``UpstreamStream/lines`` as it arrives.
    ///
    /// While the reader falls behind by more than `streamBufferBytes`, the transfer is paused (no reads from the
    /// socket) until it catches up. Streams have no total timeout unless configured, only the low-speed limit.
    /// Cancelling this call, or the task reading the body, cancels the transfer. Throws ``UpstreamError``.
    public func stream(_ request: UpstreamRequest) async throws -> UpstreamStream {
        let transfer = Transfer(request: request, mode: .streaming(bufferBytes: configuration.streamBufferBytes))
        let head = try await run(transfer) { $0.headContinuation = $1 }
        return UpstreamStream(head: head, source: StreamSource(driver: driver, transfer: transfer))
    }

    /// Starts `transfer` on the driver's queue with the continuation `attach` hands it, and waits for what the
    /// transfer resumes it with; cancelling the caller cancels the transfer.
    private func run<Value>(
        _ transfer: Transfer,
        attach: @escaping @Sendable (Transfer, CheckedContinuation<Value, any Error>) -> Void
    ) async throws -> Value {
        let driver = self.driver
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                driver.queue.async {
                    attach(transfer, continuation)
                    driver.start(transfer)
                }
            }
        } onCancel: {
            driver.queue.async { driver.cancel(transfer) }
        }
    }

    /// Stops the client: in-flight requests fail with ``UpstreamError/Code/shutdown``, connections close, and the
    /// multi handle is released. Returns when every socket is closed. Later requests fail with `shutdown`.
    public func shutdown() async {
        let driver = self.driver
        await withCheckedContinuation { continuation in
            driver.queue.async { driver.shutdown(continuation) }
        }
    }

    /// Counts of what the client holds now, for diagnostics and tests.
    public func statistics() async -> Statistics {
        let driver = self.driver
        return await withCheckedContinuation { continuation in
            driver.queue.async {
                continuation.resume(
                    returning: Statistics(
                        activeTransfers: driver.activeTransfers,
                        pausedTransfers: driver.pausedTransfers,
                        watchedSockets: driver.watchedSockets
                    )
                )
            }
        }
    }

    /// Counts of what a client holds at one moment.
    public struct Statistics: Sendable, Hashable {
        /// Transfers attached to the multi handle.
        public var activeTransfers: Int
        /// Transfers paused because their stream's reader fell behind.
        public var pausedTransfers: Int
        /// Sockets watched by Dispatch or waiting for a safe close.
        public var watchedSockets: Int
    }
}

private let globalInitialization: Void = {
    let code = curl_global_init(Int(CURL_GLOBAL_DEFAULT))
    precondition(code == CURLE_OK, "curl_global_init failed: \(code)")
}()
