import CEpoll
import Dispatch
import Glibc
import Logging

extension Shard {
    /// How long the listener rests when accepting fails and the spare descriptor cannot help.
    static let acceptPause: DispatchTimeInterval = .milliseconds(100)

    /// Accepts what the listen queue holds (64 at most per event, so connections already open get their turn).
    ///
    /// Out of descriptors (`EMFILE`, `ENFILE`), the listener stays readable (level-triggered), so retrying would
    /// spin. Instead the spare descriptor is given up for one `accept`, that connection is answered 503 and closed,
    /// and the spare is taken back: the client hears at once, and the listen queue drains. When the spare cannot be
    /// taken back, or `accept` fails for want of memory, the listener rests for `acceptPause`.
    func acceptConnections() {
        dispatchPrecondition(condition: .onQueue(queue))
        for _ in 0..<64 {
            let fd = accept4(listenFD, nil, nil, Int32(SOCK_NONBLOCK.rawValue | SOCK_CLOEXEC.rawValue))
            if fd >= 0 {
                outOfDescriptors = false
                server.accepted(fd)
                continue
            }
            let code = errno
            switch code {
            case EAGAIN, EWOULDBLOCK:
                return
            case EINTR, ECONNABORTED, EPROTO:
                continue  // that connection is gone; the next one may be fine
            case EMFILE, ENFILE:
                // accept fails so even with nothing queued: the spare tells which.
                if !outOfDescriptors {
                    outOfDescriptors = true
                    server.logger.warning(
                        "out of file descriptors: new connections get 503 until some close",
                        metadata: ["errno": "\(ServerMetrics.errnoName(code))"]
                    )
                }
                switch refuseWithSpareDescriptor() {
                case .refused:
                    server.metrics.acceptFailed(errno: code)
                case .nothingQueued:
                    return
                case .noSpare:
                    server.metrics.acceptFailed(errno: code)
                    pauseAccepting()
                    return
                }
            default:
                server.metrics.acceptFailed(errno: code)
                pauseAccepting()
                return
            }
        }
    }

    /// Opens the spare descriptor (on `/dev/null`) when none is held; false when that fails.
    @discardableResult
    func takeSpareDescriptor() -> Bool {
        if spareFD < 0 { spareFD = open("/dev/null", O_RDONLY | O_CLOEXEC) }
        return spareFD >= 0
    }

    func releaseSpareDescriptor() {
        if spareFD >= 0 { close(spareFD) }
        spareFD = -1
    }

    enum SpareOutcome {
        /// A connection was accepted in the spare's place, answered 503 and closed; the spare is back.
        case refused
        /// The listen queue was empty; the spare is back.
        case nothingQueued
        /// No spare is held (it could not be taken back): the listener must rest.
        case noSpare
    }

    /// Frees the spare, accepts one connection into its place, answers it 503 and closes it, and takes the spare
    /// back.
    private func refuseWithSpareDescriptor() -> SpareOutcome {
        guard spareFD >= 0 else { return .noSpare }
        releaseSpareDescriptor()
        let fd = accept4(listenFD, nil, nil, Int32(SOCK_NONBLOCK.rawValue | SOCK_CLOEXEC.rawValue))
        if fd >= 0 { server.refuse(fd) }
        takeSpareDescriptor()
        return fd >= 0 ? .refused : .nothingQueued
    }

    /// Takes the listener out of the epoll set for `acceptPause`, then puts it back (unless quiescing closed it).
    private func pauseAccepting() {
        guard listenFD >= 0, !acceptPaused else { return }
        acceptPaused = true
        _ = epoll_ctl(epollFD, EPOLL_CTL_DEL, listenFD, nil)
        queue.asyncAfter(deadline: .now() + Self.acceptPause) { [self] in
            acceptPaused = false
            guard listenFD >= 0 else { return }
            takeSpareDescriptor()
            watch(listenFD, events: EPOLLIN.rawValue, op: EPOLL_CTL_ADD)
        }
    }
}
