import Dispatch
import Foundation
import Synchronization

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Reads one `text/event-stream` response with URLSession's data delegate (the same code on Apple platforms and
/// Linux, where `URLSession.bytes(for:)` does not exist) and hands what happens to `events`, in order.
///
/// Concurrency: URLSession calls the delegate on the session's serial delegate queue; the parser is touched only
/// there (behind a `Mutex` all the same, for the type's `Sendable`). `events` is an `AsyncStream`: its consumer (the
/// store, on the main actor) takes them in the order they arrived.
final class EventStreamReader: NSObject, URLSessionDataDelegate, Sendable {
    enum Happening: Sendable {
        /// The response's status (200 expected).
        case opened(status: Int)
        case event(ServerSentEvent)
        /// The connection ended; the error, if it failed.
        case closed(String?)
    }

    let events: AsyncStream<Happening>
    private let continuation: AsyncStream<Happening>.Continuation
    private let parser = Mutex(ServerSentEventParser())
    private let session = Mutex<URLSession?>(nil)

    /// When the last bytes came (the server sends a comment every 15 s on a stream with nothing else to say).
    private let lastBytes = Mutex(ContinuousClock.now)
    private let watchdog: Mutex<any DispatchSourceTimer>

    /// Opens `request`'s stream; one that sends no byte for `idleLimit` is cancelled (its `events` end).
    init(request: URLRequest, idleLimit: Duration = .seconds(45)) {
        (events, continuation) = AsyncStream.makeStream(of: Happening.self)
        watchdog = Mutex(
            DispatchSource.makeTimerSource(queue: DispatchQueue(label: "feedbackhost.client.stream-watchdog"))
        )
        super.init()
        var request = request
        let configuration = URLSessionConfiguration.default
        // On Linux (swift-corelibs-foundation 6.3) a request timeout makes URLSession poll a streaming response: a
        // whole core while the stream is open (about 250,000 context switches a second, idle or not), but every event
        // arrives at once. Without one it sleeps and the events arrive in bursts up to 2 s late. Promptness wins here
        // (docs/BENCHMARKS.md, "A store following a busy session", has both); the watchdog notices a dead
        // connection either way. On Apple platforms the timeout costs nothing.
        request.timeoutInterval = idleLimit.seconds
        configuration.timeoutIntervalForRequest = idleLimit.seconds
        let queue = OperationQueue()
        queue.maxConcurrentOperationCount = 1
        let urlSession = URLSession(configuration: configuration, delegate: self, delegateQueue: queue)
        session.withLock { $0 = urlSession }
        urlSession.dataTask(with: request).resume()
        watchdog.withLock { timer in
            timer.schedule(deadline: .now() + .seconds(5), repeating: .seconds(5))
            timer.setEventHandler { [weak self] in
                guard let self else { return }
                if ContinuousClock.now - lastBytes.withLock({ $0 }) > idleLimit { cancel() }
            }
            timer.resume()
        }
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

    func urlSession(
        _ session: URLSession,
        dataTask: URLSessionDataTask,
        didReceive response: URLResponse,
        completionHandler: @escaping @Sendable (URLSession.ResponseDisposition) -> Void
    ) {
        continuation.yield(.opened(status: (response as? HTTPURLResponse)?.statusCode ?? 0))
        completionHandler(.allow)
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        lastBytes.withLock { $0 = ContinuousClock.now }
        for event in parser.withLock({ $0.feed(data) }) { continuation.yield(.event(event)) }
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        watchdog.withLock { $0.cancel() }
        continuation.yield(.closed(error.map { "\($0)" }))
        continuation.finish()
        session.finishTasksAndInvalidate()
    }
}

extension Duration {
    /// The duration in seconds, as `TimeInterval`.
    fileprivate var seconds: Double {
        Double(components.seconds) + Double(components.attoseconds) / 1e18
    }
}
