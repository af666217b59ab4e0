import MallocCounter

#if canImport(Glibc)
import Glibc
#endif

/// Resident memory of this process in bytes, from /proc/self/statm.
func residentBytes() -> Int {
    guard let file = fopen("/proc/self/statm", "r") else { return 0 }
    defer { fclose(file) }
    var size = 0
    var resident = 0
    guard withUnsafeMutablePointer(to: &size, { sizePointer in
        withUnsafeMutablePointer(to: &resident) { residentPointer in
            withVaList([sizePointer, residentPointer]) { vfscanf(file, "%ld %ld", $0) }
        }
    }) == 2 else { return 0 }
    return resident * Int(sysconf(Int32(_SC_PAGESIZE)))
}

/// Heap allocations made by the process so far.
func allocations() -> Int { malloc_counter_allocations() }

struct Sample {
    var nanosecondsPerEvent: Double
    var allocationsPerEvent: Double
    var allocations: Int
    var events: Int
}

/// Runs `body(events)` `rounds` times; returns the median time per event and allocations per event.
func measure(events: Int, rounds: Int, _ body: (Int) -> Void) -> Sample {
    body(events / 10)  // warm-up
    var samples: [Sample] = []
    samples.reserveCapacity(rounds)
    let clock = ContinuousClock()
    for _ in 0..<rounds {
        let allocationsBefore = allocations()
        let start = clock.now
        body(events)
        let elapsed = start.duration(to: clock.now)
        let allocated = allocations() - allocationsBefore
        let nanoseconds =
            Double(elapsed.components.seconds) * 1e9 + Double(elapsed.components.attoseconds) / 1e9
        samples.append(
            Sample(
                nanosecondsPerEvent: nanoseconds / Double(events),
                allocationsPerEvent: Double(allocated) / Double(events),
                allocations: allocated,
                events: events
            )
        )
    }
    samples.sort { $0.nanosecondsPerEvent < $1.nanosecondsPerEvent }
    return samples[samples.count / 2]
}

/// Bytes of resident memory per object for `count` objects made by `make` and kept alive.
func bytesPerObject<Object>(count: Int, _ make: () -> Object) -> (bytes: Double, keep: [Object]) {
    var keep: [Object] = []
    keep.reserveCapacity(count)
    let before = residentBytes()
    for _ in 0..<count { keep.append(make()) }
    let after = residentBytes()
    return (Double(after - before) / Double(count), keep)
}
