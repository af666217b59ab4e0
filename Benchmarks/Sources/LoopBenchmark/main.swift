import FeedbackLoop
import OpenCombine

#if canImport(Glibc)
import Glibc
#endif

// FeedbackLoop vs a CombineFeedback-style OpenCombine loop, same workload, same run. See docs/BENCHMARKS.md.
let arguments = CommandLine.arguments.dropFirst()
let events = arguments.first.flatMap { Int($0) } ?? 2_000_000
let rounds = 7
let idleLoops = 100_000

// `LoopBenchmark N --only-send` runs just the send loop, for a profiler.
if arguments.contains("--only-send") {
    let loop = makeFeedbackLoop()
    for _ in 0..<events { loop.send(.increment) }
    print(loop.state.count)
    exit(0)
}

if arguments.contains("--only-batch") {
    let loop = makeFeedbackLoop()
    let batch = Array(repeating: BenchEvent.increment, count: 64)
    for _ in 0..<(events / 64) { loop.send(contentsOf: batch) { _ in } }
    print(loop.state.count)
    exit(0)
}

final class Probe {}

// The allocation counter must see exactly what we allocate.
let probeBefore = allocations()
var probes: [Probe] = []
probes.reserveCapacity(1000)
let probeReserved = allocations()
for _ in 0..<1000 { probes.append(Probe()) }
let probeCount = allocations() - probeReserved
print("malloc counter check: 1000 objects -> \(probeCount) allocations (+\(probeReserved - probeBefore) for the array)")
probes = []

do {
    _ = benchFeedbacks
    let before = allocations()
    let loops = (0..<100).map { _ in makeFeedbackLoop() }
    print("allocations per new loop: \(Double(allocations() - before - 1) / 100) (\(loops.count) loops)")
}

func format(_ value: Double, _ digits: Int = 1) -> String {
    let scale = [1.0, 10.0, 100.0, 1000.0][digits]
    return String((value * scale).rounded() / scale)
}

let loop = makeFeedbackLoop()
let loopSample = measure(events: events, rounds: rounds) { count in
    for _ in 0..<count { loop.send(.increment) }
}
let batch = Array(repeating: BenchEvent.increment, count: 64)
let batchSample = measure(events: events, rounds: rounds) { count in
    for _ in 0..<(count / batch.count) { loop.send(contentsOf: batch) { _ in } }
}

let combine = makeCombineLoop()
let combineSample = measure(events: events / 4, rounds: rounds) { count in
    for _ in 0..<count { combine.send(.increment) }
}
precondition(combine.state.count > 0 && loop.state.count > 0)

let stateBytes = MemoryLayout<BenchState>.size
let idle = bytesPerObject(count: idleLoops, makeFeedbackLoop)
let combineIdle = bytesPerObject(count: idleLoops, makeCombineLoop)
precondition(idle.keep.count == idleLoops && combineIdle.keep.count == idleLoops)

print("state: \(stateBytes) bytes; \(rounds) rounds, medians; loops built and driven from this module")
print("| loop | ns/event | allocations/event | bytes per idle loop (RSS, \(idleLoops) loops) |")
print("|---|---|---|---|")
print(
    "| FeedbackLoop send(_:) | \(format(loopSample.nanosecondsPerEvent)) | "
        + "\(format(loopSample.allocationsPerEvent, 3)) (\(loopSample.allocations) in \(loopSample.events)) | "
        + "\(format(idle.bytes, 0)) (\(format(idle.bytes - Double(stateBytes) - 8, 0)) beyond state and array slot) |"
)
print(
    "| FeedbackLoop send(contentsOf:) x64 | \(format(batchSample.nanosecondsPerEvent)) | "
        + "\(format(batchSample.allocationsPerEvent, 3)) (\(batchSample.allocations) in \(batchSample.events)) | same loop |"
)
print(
    "| OpenCombine merge+scan | \(format(combineSample.nanosecondsPerEvent)) | "
        + "\(format(combineSample.allocationsPerEvent, 3)) (\(combineSample.allocations) in \(combineSample.events)) | "
        + "\(format(combineIdle.bytes, 0)) |"
)
print(
    "FeedbackLoop: \(format(combineSample.nanosecondsPerEvent / loopSample.nanosecondsPerEvent)) x faster per "
        + "event, \(format(combineIdle.bytes / idle.bytes)) x smaller per idle loop"
)
