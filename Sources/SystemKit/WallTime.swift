#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A point in wall-clock time: whole milliseconds since 1970-01-01T00:00:00Z, written in JSON as that integer.
///
/// What a durable timer keeps in its state: an absolute deadline, journaled with the state, so that a restart or a
/// passivation does not move it (a relative delay would start again from zero). The time enters a state only
/// through an event (an effect reads the `WallClock` and sends the deadline), so a replay of the journal reduces to
/// the same states whatever the time of the replay.
public struct WallTime: Codable, Comparable, Hashable, Sendable, CustomStringConvertible {
    /// Milliseconds since 1970-01-01T00:00:00Z.
    public var millisecondsSince1970: Int64

    /// The time `milliseconds` after 1970-01-01T00:00:00Z.
    public init(millisecondsSince1970 milliseconds: Int64) {
        millisecondsSince1970 = milliseconds
    }

    /// This machine's wall-clock time now (`CLOCK_REALTIME`).
    public static func now() -> WallTime {
        var spec = timespec()
        clock_gettime(CLOCK_REALTIME, &spec)
        return WallTime(millisecondsSince1970: Int64(spec.tv_sec) * 1000 + Int64(spec.tv_nsec) / 1_000_000)
    }

    /// The time `duration` later (earlier when negative), to the millisecond, saturating at the integer limits.
    public func advanced(by duration: Duration) -> WallTime {
        let (seconds, attoseconds) = duration.components
        let (scaled, overflow) = seconds.multipliedReportingOverflow(by: 1000)
        let milliseconds =
            overflow ? (seconds < 0 ? Int64.min : Int64.max) : scaled &+ attoseconds / 1_000_000_000_000_000
        let (sum, sumOverflow) = millisecondsSince1970.addingReportingOverflow(milliseconds)
        return WallTime(millisecondsSince1970: sumOverflow ? (milliseconds < 0 ? Int64.min : Int64.max) : sum)
    }

    /// The duration from this time to `other` (negative when `other` is earlier).
    public func duration(to other: WallTime) -> Duration {
        let (difference, overflow) = other.millisecondsSince1970.subtractingReportingOverflow(millisecondsSince1970)
        return .milliseconds(overflow ? (other < self ? Int64.min : Int64.max) : difference)
    }

    public static func < (lhs: WallTime, rhs: WallTime) -> Bool {
        lhs.millisecondsSince1970 < rhs.millisecondsSince1970
    }

    public static func + (time: WallTime, duration: Duration) -> WallTime { time.advanced(by: duration) }

    public static func - (time: WallTime, duration: Duration) -> WallTime { time.advanced(by: .zero - duration) }

    public var description: String { "\(millisecondsSince1970) ms since 1970" }

    public init(from decoder: any Decoder) throws {
        millisecondsSince1970 = try decoder.singleValueContainer().decode(Int64.self)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(millisecondsSince1970)
    }
}
