import Dispatch
import Glibc
import Synchronization

/// The server's access log: one line per answered request, formatted on the shard that answered into a shared
/// buffer, and written by one writer, a serial queue, when the buffer reaches `Configuration.bufferBytes`, every
/// `Configuration.flushInterval`, and at `flush()` (which `Server.shutdown` calls once its connections are done),
/// so a graceful stop loses nothing. Lines never carry a request's path parameters: each shows the pattern of the
/// route it matched (see `Router.appendRoute(of:to:)`), and time stamps are UTC, their seconds part formatted once
/// per second (no system call and no time-zone lookup per line).
///
/// Concurrency: `record` is called from any shard queue; the buffer and the formatter live behind one `Mutex`,
/// held to format one line. Writes happen only on `queue`. When the destination does not keep up, at most
/// `Configuration.maxPendingBytes` wait to be written; lines beyond are dropped and counted (`droppedLines`),
/// so a blocked log never stalls the server. (`@unchecked`: the timer, made and cancelled in `init`/`deinit`, is
/// the one non-`Sendable` member; everything else is immutable or behind the `Mutex`.)
public final class AccessLog: @unchecked Sendable {
    /// How a line looks.
    public enum Format: String, Sendable, CaseIterable {
        /// `2026-11-26T06:23:17.123Z info http.access: method=GET route=/healthz status=200 bytes=15 ...`
        case text
        /// One JSON object per line: `ts`, `level`, `label`, `msg` (`GET /healthz 200`), `method`, `route`, `status`,
        /// `bytes`, `duration_us`, `connection.id`.
        case json
    }

    private struct State {
        var buffer: [UInt8] = []
        var formatter: AccessLogFormatter
        /// Bytes handed to the writer and not yet written.
        var pending = 0
        var dropped = 0
    }

    /// The lines and their destination: what the writer's timer needs, in an object of its own that the timer holds
    /// (a weak reference to the log would give it a side table, and each retain and release of it by a shard the
    /// slow path).
    private final class Lines: Sendable {
        let configuration: Configuration
        let state: Mutex<State>
        let write: @Sendable (UnsafeRawBufferPointer) -> Void

        init(configuration: Configuration, write: @escaping @Sendable (UnsafeRawBufferPointer) -> Void) {
            self.configuration = configuration
            self.write = write
            var first = State(formatter: AccessLogFormatter(format: configuration.format, level: configuration.level))
            first.buffer.reserveCapacity(configuration.bufferBytes + 512)
            state = Mutex(first)
        }

        /// Writes what is buffered; on the writer queue.
        func writePending() {
            if let lines = state.withLock({ s in s.buffer.isEmpty ? nil : take(&s) }) { writeOut(lines) }
        }

        /// The buffer, handed to the writer: a fresh one takes its place.
        func take(_ s: inout State) -> [UInt8] {
            var lines: [UInt8] = []
            lines.reserveCapacity(configuration.bufferBytes + 512)
            swap(&lines, &s.buffer)
            s.pending += lines.count
            return lines
        }

        func writeOut(_ lines: [UInt8]) {
            lines.withUnsafeBytes { write($0) }
            state.withLock { $0.pending -= lines.count }
        }
    }

    /// How the log is written.
    public let configuration: Configuration
    private let lines: Lines
    private let queue = DispatchQueue(label: "feedbackhost.access-log")
    private let timer: any DispatchSourceTimer

    /// Creates a log that hands its lines to `write` (on its writer queue), by default standard error.
    public init(
        configuration: Configuration = Configuration(),
        write: @escaping @Sendable (UnsafeRawBufferPointer) -> Void = AccessLog.writeToStandardError
    ) {
        self.configuration = configuration
        let lines = Lines(configuration: configuration, write: write)
        self.lines = lines
        timer = DispatchSource.makeTimerSource(queue: queue)
        let interval = DispatchTimeInterval.nanoseconds(Int(configuration.flushInterval.nanoseconds))
        timer.schedule(deadline: .now() + interval, repeating: interval, leeway: .milliseconds(10))
        timer.setEventHandler { lines.writePending() }
        timer.activate()
    }

    deinit {
        timer.cancel()
    }

    /// Lines dropped because the destination did not keep up.
    public var droppedLines: Int { lines.state.withLock { $0.dropped } }

    /// Formats one line into the buffer; hands the buffer to the writer once it is full.
    func record(_ entry: AccessLogFormatter.Entry, router: Router) {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        let lines = lines
        let full = lines.state.withLock { s -> [UInt8]? in
            guard s.pending + s.buffer.count < configuration.maxPendingBytes else {
                s.dropped += 1
                return nil
            }
            s.formatter.append(entry, at: now, router: router, to: &s.buffer)
            guard s.buffer.count >= configuration.bufferBytes else { return nil }
            return lines.take(&s)
        }
        if let full { queue.async { lines.writeOut(full) } }
    }

    /// Writes every line recorded so far before it returns (on the caller's thread, after any write in progress).
    public func flush() {
        queue.sync { lines.writePending() }
    }

    /// Writes all of `bytes` to standard error, retrying short writes and `EINTR`; gives up on other errors.
    public static let writeToStandardError: @Sendable (UnsafeRawBufferPointer) -> Void = { bytes in
        var offset = 0
        while offset < bytes.count {
            let n = Glibc.write(2, bytes.baseAddress! + offset, bytes.count - offset)
            if n > 0 {
                offset += n
            } else if n < 0, errno == EINTR {
                continue
            } else {
                return
            }
        }
    }
}
