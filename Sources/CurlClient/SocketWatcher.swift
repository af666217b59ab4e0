import CCurl
import Dispatch

#if canImport(Glibc)
import Glibc
#endif

/// Watches libcurl's sockets with DispatchSources and closes them when it is safe.
///
/// libcurl says which sockets it wants watched (`CURLMOPT_SOCKETFUNCTION`) and closes them through
/// `CURLOPT_CLOSESOCKETFUNCTION`. libdispatch requires that an fd stays open until every source on it has run
/// its cancel handler, so a close that arrives while a source is still live is deferred until the last cancel
/// handler ran. A deferred fd also keeps its number reserved, so a new socket cannot be confused with it.
///
/// Concurrency: owned by the client's queue; every method must be called there, and every source handler runs there.
final class SocketWatcher {
    private struct Entry {
        var read: (any DispatchSourceRead)?
        var write: (any DispatchSourceWrite)?
        /// Sources created on this fd whose cancel handler has not run yet.
        var liveSources = 0
        var closeRequested = false
    }

    private let queue: DispatchQueue
    private var entries: [Int32: Entry] = [:]
    /// Called on the queue when a watched socket is ready: the fd and `CURL_CSELECT_IN` or `CURL_CSELECT_OUT`.
    private let onReady: (Int32, Int32) -> Void
    /// Called on the queue whenever the last entry went away.
    var onLastSocketGone: (() -> Void)?

    init(queue: DispatchQueue, onReady: @escaping (Int32, Int32) -> Void) {
        self.queue = queue
        self.onReady = onReady
    }

    /// True when no socket is watched and no close is pending.
    var isEmpty: Bool { entries.isEmpty }

    /// How many sockets are watched or waiting to be closed.
    var count: Int { entries.count }

    /// Applies libcurl's wish for one socket: `CURL_POLL_IN`, `_OUT`, `_INOUT` or `_REMOVE`.
    func update(socket fd: Int32, what: Int32) {
        dispatchPrecondition(condition: .onQueue(queue))
        let wantsRead = what == CURL_POLL_IN || what == CURL_POLL_INOUT
        let wantsWrite = what == CURL_POLL_OUT || what == CURL_POLL_INOUT
        var entry = entries[fd] ?? Entry()
        if wantsRead, entry.read == nil {
            let source = DispatchSource.makeReadSource(fileDescriptor: fd, queue: queue)
            source.setEventHandler { [onReady] in onReady(fd, CURL_CSELECT_IN) }
            source.setCancelHandler { [unowned self] in self.sourceCancelled(fd) }
            entry.read = source
            entry.liveSources += 1
            source.resume()
        } else if !wantsRead, let source = entry.read {
            source.cancel()
            entry.read = nil
        }
        if wantsWrite, entry.write == nil {
            let source = DispatchSource.makeWriteSource(fileDescriptor: fd, queue: queue)
            source.setEventHandler { [onReady] in onReady(fd, CURL_CSELECT_OUT) }
            source.setCancelHandler { [unowned self] in self.sourceCancelled(fd) }
            entry.write = source
            entry.liveSources += 1
            source.resume()
        } else if !wantsWrite, let source = entry.write {
            source.cancel()
            entry.write = nil
        }
        store(entry, for: fd)
    }

    /// libcurl wants the socket closed: close now, or after the last live source's cancel handler ran.
    func curlCloses(socket fd: Int32) {
        dispatchPrecondition(condition: .onQueue(queue))
        guard var entry = entries[fd], entry.liveSources > 0 else {
            close(fd)
            return
        }
        entry.read?.cancel()
        entry.read = nil
        entry.write?.cancel()
        entry.write = nil
        entry.closeRequested = true
        entries[fd] = entry
    }

    /// Cancels every source (at shutdown, after libcurl closed or forgot its sockets).
    func cancelAll() {
        dispatchPrecondition(condition: .onQueue(queue))
        for fd in Array(entries.keys) {
            guard var entry = entries[fd] else { continue }
            entry.read?.cancel()
            entry.read = nil
            entry.write?.cancel()
            entry.write = nil
            store(entry, for: fd)
        }
    }

    private func sourceCancelled(_ fd: Int32) {
        dispatchPrecondition(condition: .onQueue(queue))
        guard var entry = entries[fd] else { return }
        entry.liveSources -= 1
        if entry.liveSources == 0, entry.closeRequested {
            close(fd)
            entry.closeRequested = false
        }
        store(entry, for: fd)
    }

    private func store(_ entry: Entry, for fd: Int32) {
        if entry.read == nil, entry.write == nil, entry.liveSources == 0, !entry.closeRequested {
            entries[fd] = nil
            if entries.isEmpty { onLastSocketGone?() }
        } else {
            entries[fd] = entry
        }
    }
}
