import Dispatch
import Foundation
import Synchronization

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Reads one `text/event-stream` response with URLSession's data delegate (the same code on Apple platforms and
/// Linux, where `URLSession.bytes(for:)` does not exist) and hands what happens to `events`, in order: the events a
/// piece of the response completed go out together, so their consumer wakes once per piece, not once per event.
///
/// On Linux the stream goes over a connection the session has used before (`warmUp`): swift-corelibs-foundation
/// (6.3) keeps the write source it made to see a new connection's connect finish until the connection closes, and a
/// socket is always writable, so a stream on a new connection wakes its threads without end (a core per open stream,
/// about 250,000 context switches a second, idle or not). A request on a connection taken from the session's cache
/// has no such source. docs/BENCHMARKS.md, "A store following a busy session", has the figures.
///
/// Concurrency: URLSession calls the delegate on the session's serial delegate queue (over a serial Dispatch queue
/// of the reader's own); the parser is touched only
/// there (behind a `Mutex` all the same, for the type's `Sendable`). `events` is an `AsyncStream`: its consumer (the
/// store, on the main actor) takes them in the order they arrived.
final class EventStreamReader: NSObject, URLSessionDataDelegate, Sendable {
    enum Happening: Sendable {
        /// The response's status (200 expected).
        case opened(status: Int)
        /// The events one piece of the response completed, in order.
        case events([ServerSentEvent])
        /// The connection ended; the error, if it failed.
        case closed(String?)
    }

    let events: AsyncStream<Happening>
    private let continuation: AsyncStream<Happening>.Continuation
    private let parser = Mutex(ServerSentEventParser())
    private let session = Mutex<URLSession?>(nil)
    /// The stream's request, until the warm-up request (if any) ended and it was sent.
    private let pending: Mutex<URLRequest?>
    /// The warm-up request's task, whose answer is not the stream's.
    private let warming = Mutex<URLSessionTask?>(nil)

    /// When the last bytes came (the server sends a comment every 15 s on a stream with nothing else to say).
    private let lastBytes = Mutex(ContinuousClock.now)
    private let watchdog: Mutex<any DispatchSourceTimer>
    /// Where the delegate runs (the operation queue holds it unowned).
    private let delivery = DispatchQueue(label: "feedbackhost.client.stream")

    /// Opens `request`'s stream, after a request to `warmUp` on Linux (any answer will do; see the type's comment);
    /// one that sends no byte for `idleLimit` is cancelled (its `events` end).
    init(request: URLRequest, warmUp: URL? = nil, idleLimit: Duration = .seconds(45)) {
        (events, continuation) = AsyncStream.makeStream(of: Happening.self)
        watchdog = Mutex(
            DispatchSource.makeTimerSource(queue: DispatchQueue(label: "feedbackhost.client.stream-watchdog"))
        )
        var request = request
        // The request's timeout restarts with every piece that arrives: a stream ends only after that long silent.
        request.timeoutInterval = idleLimit.seconds
        pending = Mutex(request)
        super.init()
        // No cache: a stream is never cached, and a session with one can trap when its task is cancelled (see
        // `URLSessionTransport.session`), as `cancel` does.
        let configuration = URLSessionTransport.uncachedConfiguration()
        configuration.timeoutIntervalForRequest = idleLimit.seconds
        let queue = OperationQueue()
        queue.maxConcurrentOperationCount = 1
        // Operations run on a serial Dispatch queue: on Linux an OperationQueue of its own costs each piece of the
        // response an extra thread hand-off.
        queue.underlyingQueue = delivery
        let urlSession = URLSession(configuration: configuration, delegate: self, delegateQueue: queue)
        session.withLock { $0 = urlSession }
        #if canImport(FoundationNetworking)
        if let warmUp {
            let task = urlSession.dataTask(with: URLRequest(url: warmUp, timeoutInterval: 10))
            warming.withLock { $0 = task }
            task.resume()
        } else {
            sendStreamRequest()
        }
        #else
        sendStreamRequest()
        #endif
        watchdog.withLock { timer in
            timer.schedule(deadline: .now() + .seconds(5), repeating: .seconds(5))
            timer.setEventHandler { [weak self] in
                guard let self else { return }
                if ContinuousClock.now - lastBytes.withLock({ $0 }) > idleLimit { cancel() }
            }
            timer.resume()
        }
    }

    /// Sends the stream's request, unless the reader was cancelled (then `events` ends).
    private func sendStreamRequest() {
        // Under the session's lock, so that `cancel` does not invalidate the session between the check and the task.
        let sent = session.withLock { session -> Bool in
            guard let session, let request = pending.withLock({ $0.take() }) else { return false }
            lastBytes.withLock { $0 = ContinuousClock.now }
            session.dataTask(with: request).resume()
            return true
        }
        if !sent { finish("cancelled") }
    }

    private func finish(_ error: String?) {
        watchdog.withLock { $0.cancel() }
        continuation.yield(.closed(error))
        continuation.finish()
    }

    /// The last `retry:` the server sent, in milliseconds.
    var retryMilliseconds: Int? { parser.withLock { $0.retryMilliseconds } }

    /// Stops reading; `events` ends with `.closed`.
    func cancel() {
        watchdog.withLock { $0.cancel() }
        session.withLock { session in
            session?.invalidateAndCancel()
            session = nil
        }
    }

    private func isWarmUp(_ task: URLSessionTask) -> Bool {
        warming.withLock { $0 === task }
    }

    func urlSession(
        _ session: URLSession,
        dataTask: URLSessionDataTask,
        didReceive response: URLResponse,
        completionHandler: @escaping @Sendable (URLSession.ResponseDisposition) -> Void
    ) {
        if !isWarmUp(dataTask) { continuation.yield(.opened(status: (response as? HTTPURLResponse)?.statusCode ?? 0)) }
        completionHandler(.allow)
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        guard !isWarmUp(dataTask) else { return }
        lastBytes.withLock { $0 = ContinuousClock.now }
        let completed = parser.withLock { $0.feed(data) }
        if !completed.isEmpty { continuation.yield(.events(completed)) }
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        if isWarmUp(task) {
            // Whatever it answered (even nothing), the stream goes next; on the same connection when it is still open.
            warming.withLock { $0 = nil }
            return sendStreamRequest()
        }
        finish(error.map { "\($0)" })
        session.finishTasksAndInvalidate()
    }
}

extension Duration {
    /// The duration in seconds, as `TimeInterval`.
    fileprivate var seconds: Double {
        Double(components.seconds) + Double(components.attoseconds) / 1e18
    }
}
