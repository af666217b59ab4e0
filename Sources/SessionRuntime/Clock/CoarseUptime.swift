import Glibc

/// `DispatchTime.now().uptimeNanoseconds` (`CLOCK_MONOTONIC` on Linux) to the kernel's tick, a few milliseconds
/// behind at most: `CLOCK_MONOTONIC_COARSE` is read from memory the kernel updates on each tick, without reading the
/// time-stamp counter (about 5 ns here against 22).
@usableFromInline
func coarseUptimeNanoseconds() -> UInt64 {
    var now = timespec()
    clock_gettime(CLOCK_MONOTONIC_COARSE, &now)
    return UInt64(now.tv_sec) * 1_000_000_000 + UInt64(now.tv_nsec)
}
