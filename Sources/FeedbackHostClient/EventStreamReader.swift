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

    init(request: URLRequest) {
        (events, continuation) = AsyncStream.makeStream(of: Happening.self)
        super.init()
        let queue = OperationQueue()
        queue.maxConcurrentOperationCount = 1
        let configuration = URLSessionConfiguration.default
        configuration.timeoutIntervalForRequest = request.timeoutInterval
        let urlSession = URLSession(configuration: configuration, delegate: self, delegateQueue: queue)
        session.withLock { $0 = urlSession }
        urlSession.dataTask(with: request).resume()
    }

    /// The last `retry:` the server sent, in milliseconds.
    var retryMilliseconds: Int? { parser.withLock { $0.retryMilliseconds } }

    /// Stops reading; `events` ends with `.closed`.
    func cancel() {
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
        for event in parser.withLock({ $0.feed(data) }) { continuation.yield(.event(event)) }
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        continuation.yield(.closed(error.map { "\($0)" }))
        continuation.finish()
        session.finishTasksAndInvalidate()
    }
}
