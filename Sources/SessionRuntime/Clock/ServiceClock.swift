import FeedbackJSON
public import FeedbackLoop
import Foundation
public import Logging
import Synchronization
public import SystemKit

#if canImport(Glibc)
import Glibc
#endif

/// The time of a server started with `--clock manual` (or `skip`): one ``TestClock`` that every session's effects
/// sleep on and that tracks every session's effects, the wall time that follows it from `origin` (what durable
/// timers read and keep in their states), and the file in the data directory that keeps that time across restarts.
///
/// `SessionService.advanceClock(_:to:)` moves it; `GET /v1/clock` reads it. Thread-safe: the clock has its own
/// lock, advances take turns under another (`takeTurn()`), and the time file is written by the advance whose turn
/// it is (or at shutdown).
public final class ServiceClock: Sendable {
    /// How the clock moves.
    public enum Mode: String, Sendable {
        /// Only when `POST /v1/clock/advance` says so.
        case manual
        /// Also by itself: to the next deadline whenever every effect is asleep on it (Temporal's time skipping).
        case skip
    }

    /// How the clock moves.
    public let mode: Mode
    /// The clock every session's effects sleep on, and their effect tracker.
    public let clock: TestClock
    /// The wall time at the clock's instant zero.
    public let origin: WallTime
    /// The wall time durable timers read and wait for: `origin` plus the clock's instant.
    public let wallClock: WallClock
    /// How long an advance waits, in real time, for effects under way to end (`clock.settle.ms`).
    public let settleLimit: Duration
    /// Where the time is kept between runs (`DATA_DIR/clock.json`); nil without a journal.
    let file: String?
    package let logger: Logger
    /// Whether an advance is under way, and the advances waiting for their turn, in order.
    private let turns = Mutex(Turns())

    private struct Turns {
        var taken = false
        var waiting: [CheckedContinuation<Void, Never>] = []
    }

    /// A clock at `start`, or at the time `file` kept when it holds one.
    public init(mode: Mode, start: WallTime, file: String?, settleLimit: Duration, logger: Logger) {
        self.mode = mode
        self.file = file
        self.settleLimit = settleLimit
        self.logger = logger
        origin = file.flatMap(Self.savedTime(at:)) ?? start
        clock = TestClock()
        wallClock = .following(clock, from: origin)
    }

    /// The wall time now.
    public func now() -> WallTime { wallClock.now() }

    /// The clock's instant at wall time `time`.
    package func instant(at time: WallTime) -> TestClock.Instant {
        TestClock.Instant(offset: origin.duration(to: time))
    }

    /// The wall time at the clock's `instant`.
    package func time(at instant: TestClock.Instant) -> WallTime {
        origin.advanced(by: instant.offset)
    }

    /// Returns when no other advance is under way; advances take turns in the order they asked. Call `endTurn()`
    /// after.
    package func takeTurn() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let now = turns.withLock { turns -> Bool in
                if !turns.taken {
                    turns.taken = true
                    return true
                }
                turns.waiting.append(continuation)
                return false
            }
            if now { continuation.resume() }
        }
    }

    /// Gives the turn to the next advance waiting, if any.
    package func endTurn() {
        let next = turns.withLock { turns -> CheckedContinuation<Void, Never>? in
            guard !turns.waiting.isEmpty else {
                turns.taken = false
                return nil
            }
            return turns.waiting.removeFirst()
        }
        next?.resume()
    }

    /// Whether an advance is under way.
    package var isAdvancing: Bool { turns.withLock { $0.taken } }

    /// Writes the time now to `file` (a temporary file, synced, then renamed over it), so a restart resumes from it.
    package func save() {
        guard let file else { return }
        let body = Array(#"{"now":\#(now().millisecondsSince1970)}"#.utf8) + [0x0A]
        let temporary = file + ".tmp"
        do {
            guard FileManager.default.createFile(atPath: temporary, contents: Data(body)) else {
                throw CocoaError(.fileWriteUnknown)
            }
            let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: temporary))
            try handle.synchronize()
            try handle.close()
            guard rename(temporary, file) == 0 else { throw POSIXError(.init(rawValue: errno) ?? .EIO) }
        } catch {
            logger.warning("the manual clock's time was not saved", metadata: ["file": "\(file)", "error": "\(error)"])
        }
    }

    /// The time a previous run kept in `path`, nil when there is none (or it does not read as one).
    package static func savedTime(at path: String) -> WallTime? {
        guard let data = FileManager.default.contents(atPath: path),
            case .object(let members)? = try? JSONValue(parsing: Array(data)),
            case .int(let milliseconds)? = members["now"]
        else { return nil }
        return WallTime(millisecondsSince1970: milliseconds)
    }
}
