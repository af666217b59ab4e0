import CEpoll
import Dispatch
import Glibc
public import Logging
import Synchronization

/// An HTTP/1.1 server on non-blocking POSIX sockets whose readiness Dispatch delivers: one shard per usable CPU,
/// each a serial queue with a private epoll set (see `Shard`). Sync handlers run on the shard queue; async handlers
/// run in Tasks; streaming responses are written through `ResponseStream` from any thread.
///
/// `start()` and `shutdown(deadline:)` may be called from any thread, once each, in that order.
public final class Server: Sendable {
    let core: ServerCore

    /// Creates a server; nothing is bound until `start()`.
    public init(configuration: HTTPServerConfiguration, router: Router, logger: Logger) {
        core = ServerCore(configuration: configuration, router: router, logger: logger)
    }

    /// Calls `hook` on a shard's thread each time every shard has served all the work it had ready and is about to
    /// wait for more: the moment the server would go idle. The journal's gathering window ends there, since no post
    /// can join it until a client sends one. Set before `start()`; one hook, a later call replaces it.
    public func whenIdle(_ hook: @escaping @Sendable () -> Void) {
        core.idleHook = hook
    }

    /// Binds, listens and starts the shards. Returns the bound port (useful with port 0).
    public func start() throws(HTTPServerError) -> Int {
        guard core.shards.isEmpty else { throw HTTPServerError(.io, "The server was already started.") }
        signal(SIGPIPE, SIG_IGN)
        let configuration = core.configuration
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue | SOCK_NONBLOCK.rawValue | SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw HTTPServerError(.io, "socket failed: errno \(errno)") }
        var one: Int32 = 1
        _ = setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(truncatingIfNeeded: configuration.port).bigEndian)
        guard inet_pton(AF_INET, configuration.host, &address.sin_addr) == 1 else {
            close(fd)
            throw HTTPServerError(.io, "\(configuration.host) is not an IPv4 address.")
        }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard bound == 0, listen(fd, Int32(configuration.backlog)) == 0 else {
            let code = errno
            close(fd)
            throw HTTPServerError(.io, "Cannot listen on \(configuration.host):\(configuration.port): errno \(code)")
        }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        let port = Int(UInt16(bigEndian: address.sin_port))

        core.clampToDescriptorLimit()
        let count = max(1, configuration.shardCount ?? Int(cepoll_usable_cpu_count()))
        do throws(HTTPServerError) {
            core.shards = try (0..<count).map { (i) throws(HTTPServerError) in try Shard(index: i, server: core) }
            core.busyShards.store(count, ordering: .relaxed)
        } catch {
            close(fd)
            throw error
        }
        let shortest = min(
            configuration.headerTimeout,
            configuration.bodyTimeout,
            configuration.minBodyRate > 0 ? configuration.bodyRateGrace : configuration.bodyTimeout,
            configuration.idleTimeout,
            configuration.writeTimeout
        )
        let tickMillis = min(max(Int(shortest.nanoseconds / 4_000_000), 10), 1000)
        do throws(HTTPServerError) {
            for shard in core.shards { try shard.start(tick: .milliseconds(tickMillis)) }
        } catch {
            for shard in core.shards { shard.queue.sync { shard.stop() } }
            close(fd)
            throw error
        }
        let first = core.shards[0]
        first.queue.sync {
            first.listenFD = fd
            first.takeSpareDescriptor()
            first.watch(fd, events: EPOLLIN.rawValue, op: EPOLL_CTL_ADD)
        }
        core.logger.info("listening", metadata: ["http.host": "\(configuration.host)", "http.port": "\(port)"])
        return port
    }

    /// The connection cap in force: `maxConnections` as configured, or lower to fit the descriptor limit (after
    /// `start()`).
    public var maxConnections: Int { core.maxConnections }

    /// The number of open connections.
    public var connectionCount: Int { core.active.load(ordering: .relaxed) }

    /// Stops accepting, closes idle connections, lets requests in flight finish, ends streaming responses
    /// (their `onClose` gets `.serverShutdown`), and after `deadline` closes whatever is left.
    public func shutdown(deadline: Duration) async {
        let core = self.core
        guard !core.shards.isEmpty else { return }
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let done = core.quiesce.withLock { s -> Bool in
                if s.quiesced.count == core.shards.count { return true }
                s.waiters.append(continuation)
                return false
            }
            if done {
                continuation.resume()
                return
            }
            for shard in core.shards { shard.queue.async { shard.beginQuiescing() } }
            // Whichever comes first, all shards quiesced or the deadline, takes the waiter and resumes it.
            DispatchQueue.global().asyncAfter(deadline: .now() + .nanoseconds(Int(deadline.nanoseconds))) {
                let waiters = core.quiesce.withLock { s -> [CheckedContinuation<Void, Never>] in
                    defer { s.waiters = [] }
                    return s.waiters
                }
                for waiter in waiters { waiter.resume() }
            }
        }
        for shard in core.shards {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                shard.queue.async {
                    shard.stop()
                    continuation.resume()
                }
            }
        }
        core.accessLog?.flush()  // every request is answered or cut: its line is the last
        core.logger.info("stopped")
    }
}
