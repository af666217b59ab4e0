import CEpoll
import Dispatch
import Glibc
import Logging
import Synchronization

/// One event loop of the server: a serial queue, a private level-triggered epoll set watched by one waiter thread of
/// its own, and the table of its connections indexed by fd. When the set has something ready, the waiter serves it
/// on the queue (`queue.sync`, which runs on the waiter itself while the queue is idle): `handleEvents` empties
/// `epoll_wait(fd, events, 256, 0)` and does all non-blocking socket I/O inline. A large fan-out's slices do the same
/// between them (`serveBetweenSlices`), since the waiter's turn on the queue comes only after every part queued before.
///
/// A `DispatchSourceRead` on the set did this before. On Linux every firing of such a source goes through
/// Dispatch's manager thread (its own epoll, a hand-off to a worker, then a re-arm that wakes the manager again):
/// three thread wake-ups per burst of requests, 3 % of a durable post's CPU. The waiter needs none of them, and it
/// also writes the answers a journal commit releases (`LateAnswers` wakes it through `wakeFD`), so that the shard's
/// work stays on one thread instead of moving to a Dispatch worker and back.
///
/// Every mutable property is touched only on `queue` (checked with `dispatchPrecondition` at entry points).
/// Sockets are closed on the queue after `EPOLL_CTL_DEL`; no DispatchSource watches them individually.
final class Shard: @unchecked Sendable {
    let index: Int
    let queue: DispatchQueue
    let epollFD: Int32
    let server: ServerCore
    /// Answers given after their handler returned, waiting for one hop to this shard.
    let lateAnswers = LateAnswers()
    /// Wakes the waiter thread (an eventfd): for answers that arrived for this shard (`LateAnswers`) and for `stop`.
    /// Under the `Mutex`, -1 once the waiter ended and closed it, so that a late wake-up never writes to a
    /// descriptor number the process has reused.
    private let wake: Mutex<Int32>
    /// The eventfd, as the waiter polls it (the waiter alone closes it).
    private let wakeFD: Int32
    /// `stop` ran: the waiter ends at its next wake.
    private let stopping = Atomic<Bool>(false)
    /// The waiter thread started; it closes the epoll set and the eventfd when it ends (else `deinit` does).
    private var waiterStarted = false
    /// The waiter thread ended (for tests).
    let waiterEnded = Atomic<Bool>(false)
    var timer: (any DispatchSourceTimer)?
    /// The list `serveArrived` takes late answers into, its room kept for the next bursts; on the queue alone.
    @exclusivity(unchecked)
    private var takenAnswers: [LateAnswers.Answer] = []
    /// Touched on the shard's queue alone, at every request: no run-time exclusivity check.
    @exclusivity(unchecked)
    var connections: [Connection?] = []
    var live: [Connection] = []
    let readBuffer: UnsafeMutableRawBufferPointer
    let events: UnsafeMutablePointer<epoll_event>
    var listenFD: Int32 = -1
    /// Shard 0 only: a descriptor on `/dev/null` held so that, out of descriptors, one more connection can be
    /// accepted and refused (see `acceptConnections`); -1 when none is held.
    var spareFD: Int32 = -1
    /// Shard 0 only: the last `accept` failed for want of descriptors (the warning is logged once per episode).
    var outOfDescriptors = false
    /// Shard 0 only: the listener is out of the epoll set for a moment (`pauseAccepting`).
    var acceptPaused = false
    /// Touched on the shard's queue alone, at every request: no run-time exclusivity check.
    @exclusivity(unchecked)
    var now: UInt64 = DispatchTime.now().uptimeNanoseconds
    /// Touched on the shard's queue alone, at every request: no run-time exclusivity check.
    @exclusivity(unchecked)
    var date = HTTPDate()
    /// Bytes sent and not yet added to the bytes-sent counter, which the shards share: added once a flush or a
    /// fan-out's slice (`reportBytesSent`), not once a send.
    @exclusivity(unchecked)
    var unreportedBytesSent = 0
    /// Graceful shutdown began: new connections are refused, and the server hears when the last one closed.
    var quiescing = false
    static let maxEvents: Int32 = 256

    init(index: Int, server: ServerCore) throws(HTTPServerError) {
        self.index = index
        self.server = server
        self.queue = DispatchQueue(label: "feedbackhost.http.shard\(index)")
        let fd = epoll_create1(Int32(EPOLL_CLOEXEC))
        guard fd >= 0 else { throw HTTPServerError(.io, "epoll_create1 failed: errno \(errno)") }
        let wake = eventfd(0, Int32(EFD_CLOEXEC | EFD_NONBLOCK))
        guard wake >= 0 else {
            close(fd)
            throw HTTPServerError(.io, "eventfd failed: errno \(errno)")
        }
        self.epollFD = fd
        self.wakeFD = wake
        self.wake = Mutex(wake)
        self.readBuffer = .allocate(byteCount: 64 * 1024, alignment: 16)
        self.events = .allocate(capacity: Int(Self.maxEvents))
    }

    deinit {
        if !waiterStarted {
            close(epollFD)
            close(wakeFD)
        }
        readBuffer.deallocate()
        events.deallocate()
    }

    /// Starts the waiter thread and the timeout timer.
    func start(tick: DispatchTimeInterval) throws(HTTPServerError) {
        var thread = pthread_t()
        // The waiter holds the shard until it ends (after `stop`).
        let context = Unmanaged.passRetained(self).toOpaque()
        let created = pthread_create(
            &thread,
            nil,
            { context in
                Unmanaged<Shard>.fromOpaque(context!).takeRetainedValue().waitForEvents()
                return nil
            },
            context
        )
        guard created == 0 else {
            Unmanaged<Shard>.fromOpaque(context).release()
            throw HTTPServerError(.io, "pthread_create failed: \(created)")
        }
        pthread_detach(thread)
        waiterStarted = true
        let timer = DispatchSource.makeTimerSource(queue: queue)
        timer.schedule(deadline: .now() + tick, repeating: tick, leeway: .milliseconds(5))
        timer.setEventHandler { [unowned self] in self.tick() }
        self.timer = timer
        timer.resume()
    }

    func watch(_ fd: Int32, events mask: UInt32, op: Int32) {
        var event = epoll_event()
        event.events = mask
        event.data.fd = fd
        _ = epoll_ctl(epollFD, op, fd, &event)
    }

    static let readMask = EPOLLIN.rawValue | EPOLLRDHUP.rawValue

    /// The waiter thread: sleeps in `poll` until the epoll set has something ready or `wakeFD` was written (answers
    /// arrived, or `stop`), then serves the shard on its queue (`queue.sync`, on this thread while the queue is idle).
    /// `handleEvents` reads the set again there, so a readiness that work on the queue consumed meanwhile (a closed
    /// connection, say) is never acted on. Ends at the first wake after `stop`, closing the epoll set (as the read
    /// source's cancel handler did before) and the eventfd.
    private func waitForEvents() {
        defer {
            close(epollFD)
            wake.withLock { descriptor in
                close(descriptor)
                descriptor = -1
            }
            waiterEnded.store(true, ordering: .releasing)
        }
        var watched = [
            pollfd(fd: epollFD, events: Int16(POLLIN), revents: 0),
            pollfd(fd: wakeFD, events: Int16(POLLIN), revents: 0),
        ]
        let idleHook = server.idleHook
        while true {
            watched[0].revents = 0
            watched[1].revents = 0
            var ready: Int32
            if let idleHook {
                // Nothing ready now (a look that does not wait): this shard is about to go idle, and when it is the
                // last one busy, the server is.
                ready = poll(&watched, 2, 0)
                if ready == 0 {
                    if server.busyShards.subtract(1, ordering: .acquiringAndReleasing).newValue == 0 { idleHook() }
                    ready = poll(&watched, 2, -1)
                    server.busyShards.add(1, ordering: .acquiringAndReleasing)
                }
            } else {
                ready = poll(&watched, 2, -1)
            }
            if ready < 0 {
                if errno == EINTR { continue }
                if errno == ENOMEM {
                    // Out of kernel memory for a moment: the shard must not stop serving over it.
                    usleep(1_000)
                    continue
                }
                return
            }
            let woken = watched[1].revents != 0
            if woken {
                var count: UInt64 = 0
                _ = read(wakeFD, &count, 8)
                if stopping.load(ordering: .acquiring) { return }
            }
            queue.sync { serveArrived(answers: woken) }
        }
    }

    /// Wakes the waiter (from any thread): answers wait in this shard's `LateAnswers`.
    func wakeWaiter() {
        wake.withLock { descriptor in
            guard descriptor >= 0 else { return }  // the waiter ended: nothing is served any more
            var one: UInt64 = 1
            _ = write(descriptor, &one, 8)
        }
    }

    /// Between two slices of a large fan-out (`ResponseStream.writeSlices`): writes the answers that arrived and
    /// serves the sockets that are ready, as the waiter would. Each part of a fan-out is a block of its own on the
    /// queue, all of them queued by the stream hub before the waiter's turn (`queue.sync`), so without this a post's
    /// answer and the requests of this shard waited for the first slice of every part, most of a 10,000-subscriber
    /// fan-out (the poster's answer 12 ms after its post, its first frame at 5 ms, session 40); now for one slice.
    /// Safe on the queue: `stop` runs on the queue too, and the waiter closes the epoll set only after it, so while
    /// `stopping` is false here the set stays open for the whole block.
    func serveBetweenSlices() {
        dispatchPrecondition(condition: .onQueue(queue))
        guard !stopping.load(ordering: .acquiring) else { return }
        serveArrived(answers: true)
    }

    /// What the waiter does on its turn and a large fan-out between its slices: writes the late answers that arrived
    /// (with `answers`: when woken for them), then serves the sockets that are ready.
    private func serveArrived(answers: Bool) {
        if answers {
            lateAnswers.take(into: &takenAnswers)
            deliver(&takenAnswers)  // which empties it
        }
        handleEvents()
    }

    /// Runs `epoll_wait` until it reports no more ready sockets, serving each inline.
    private func handleEvents() {
        dispatchPrecondition(condition: .onQueue(queue))
        while true {
            let n = epoll_wait(epollFD, events, Self.maxEvents, 0)
            guard n > 0 else { return }
            now = DispatchTime.now().uptimeNanoseconds
            for i in 0..<Int(n) {
                let event = events[i]
                let fd = event.data.fd
                if fd == listenFD {
                    acceptConnections()
                    continue
                }
                guard fd >= 0, Int(fd) < connections.count, let connection = connections[Int(fd)] else { continue }
                let mask = event.events
                if mask & (EPOLLERR.rawValue | EPOLLHUP.rawValue) != 0 {
                    // Reset, or both directions shut: nothing more can be delivered. (Reported whatever the mask,
                    // so waiting would spin.)
                    closeConnection(connection)
                    continue
                }
                if mask & EPOLLOUT.rawValue != 0 {
                    writable(connection)
                    if connections[Int(fd)] !== connection { continue }
                }
                if !connection.readPaused,
                    mask & (EPOLLIN.rawValue | EPOLLRDHUP.rawValue) != 0
                {
                    readable(connection)
                }
            }
            if n < Self.maxEvents { return }
        }
    }

    /// Registers an accepted socket with this shard (on the shard's queue).
    func adopt(_ fd: Int32, id: UInt64) {
        dispatchPrecondition(condition: .onQueue(queue))
        now = DispatchTime.now().uptimeNanoseconds
        guard !quiescing else {
            server.rejectOverCapacity(fd)
            return
        }
        let connection = Connection(
            fd: fd,
            id: id,
            decoder: RequestDecoder(limits: server.configuration.limits),
            lifecycle: ConnectionLifecycle(timeouts: server.timeouts, now: now)
        )
        if Int(fd) >= connections.count {
            connections.append(contentsOf: repeatElement(nil, count: Int(fd) + 1 - connections.count + 64))
        }
        connections[Int(fd)] = connection
        connection.slot = live.count
        live.append(connection)
        watch(fd, events: Self.readMask, op: EPOLL_CTL_ADD)
        server.metrics.connectionOpened()
    }

    /// Closes a connection: unregisters it, ends its stream, closes the fd.
    func closeConnection(_ connection: Connection, reason: ResponseStream.CloseReason = .clientGone) {
        let fd = connection.fd
        guard Int(fd) < connections.count, connections[Int(fd)] === connection else { return }
        connections[Int(fd)] = nil
        let last = live.removeLast()
        if last !== connection {
            live[connection.slot] = last
            last.slot = connection.slot
        }
        _ = epoll_ctl(epollFD, EPOLL_CTL_DEL, fd, nil)
        close(fd)
        connection.stream?.close(reason)
        connection.stream = nil
        connection.streamEncoder = nil
        server.connectionClosed()
        if quiescing, live.isEmpty { server.shardQuiesced(self) }
    }

    private func tick() {
        now = DispatchTime.now().uptimeNanoseconds
        date.refresh()
        var expired: [(Connection, ConnectionLifecycle.Action)] = []
        for connection in live {
            let action = connection.lifecycle.tick(now: now)
            if action != .none { expired.append((connection, action)) }
        }
        for (connection, action) in expired { perform(action, on: connection) }
        if quiescing, live.isEmpty { server.shardQuiesced(self) }
    }

    /// Graceful shutdown (quiescing) of this shard's connections, on the queue: the listener closes, and each
    /// connection's lifecycle says what becomes of it.
    func beginQuiescing() {
        dispatchPrecondition(condition: .onQueue(queue))
        quiescing = true
        if listenFD >= 0 {
            _ = epoll_ctl(epollFD, EPOLL_CTL_DEL, listenFD, nil)
            close(listenFD)
            listenFD = -1
        }
        releaseSpareDescriptor()
        for connection in live { perform(connection.lifecycle.shutdownRequested(), on: connection) }
        if live.isEmpty { server.shardQuiesced(self) }
    }

    /// Closes everything left (after the shutdown deadline) and stops the sources.
    func stop() {
        dispatchPrecondition(condition: .onQueue(queue))
        for connection in live { closeConnection(connection, reason: .serverShutdown) }
        releaseSpareDescriptor()
        timer?.cancel()
        timer = nil
        if !stopping.exchange(true, ordering: .acquiringAndReleasing) { wakeWaiter() }
    }
}
