import CoreMetrics
import Prometheus
import Synchronization

/// The service's metrics factory: Prometheus' for everything but timers, whose histograms are ``DurationHistogram``s
/// that `/metrics` renders after the registry's metrics (``render(into:)``), in the same text format, with the names,
/// labels and buckets the Prometheus factory would give them (its sanitizer, its buckets for the label or its default).
///
/// Why timers differ: a post records two of them (its reduce and its request), and swift-prometheus' histogram takes
/// a lock and walks every bucket on each record (its buckets are cumulative): about 650 instructions a record under
/// callgrind, its lock included, 2 % of a durable post's for the two (docs/BENCHMARKS.md, session 34). Here a record
/// is a walk up the bounds to its bucket (with `durationBuckets`, a reduce stops at the first, a request of a
/// millisecond at the tenth) and two atomic additions.
struct ServiceMetricsFactory: MetricsFactory {
    let prometheus: PrometheusMetricsFactory
    let timers: DurationHistograms

    /// The service's default buckets for timers (`ServiceApplication.build` sets them as the Prometheus factory's
    /// `defaultDurationHistogramBuckets`; a label with buckets of its own keeps them): 1 µs to 10 s
    /// in steps of 1, 2.5 and 5. The server's durations span that range: a reduce takes about 0.1 µs, a request or a
    /// group commit 20 µs to a few ms, an activation or a late timer milliseconds to seconds. The Prometheus
    /// library's default starts at 5 ms, so every reduce, nearly every request and every commit fell in its first
    /// bucket and the histograms told nothing.
    static let durationBuckets: [Duration] =
        [1, 10, 100, 1_000, 10_000, 100_000, 1_000_000].flatMap { (micro: Int64) -> [Duration] in
            [.microseconds(micro), .nanoseconds(micro * 2_500), .microseconds(micro * 5)]
        } + [.seconds(10)]

    init(_ prometheus: PrometheusMetricsFactory) {
        self.prometheus = prometheus
        timers = DurationHistograms()
    }

    func makeCounter(label: String, dimensions: [(String, String)]) -> any CounterHandler {
        prometheus.makeCounter(label: label, dimensions: dimensions)
    }

    func makeFloatingPointCounter(label: String, dimensions: [(String, String)]) -> any FloatingPointCounterHandler {
        prometheus.makeFloatingPointCounter(label: label, dimensions: dimensions)
    }

    func makeMeter(label: String, dimensions: [(String, String)]) -> any MeterHandler {
        prometheus.makeMeter(label: label, dimensions: dimensions)
    }

    func makeRecorder(label: String, dimensions: [(String, String)], aggregate: Bool) -> any RecorderHandler {
        prometheus.makeRecorder(label: label, dimensions: dimensions, aggregate: aggregate)
    }

    func makeTimer(label: String, dimensions: [(String, String)]) -> any TimerHandler {
        let (label, dimensions) = prometheus.nameAndLabelSanitizer(label, dimensions)
        let buckets = prometheus.durationHistogramBuckets[label] ?? prometheus.defaultDurationHistogramBuckets
        return timers.histogram(label, dimensions, buckets: buckets)
    }

    func destroyCounter(_ handler: any CounterHandler) { prometheus.destroyCounter(handler) }
    func destroyFloatingPointCounter(_ handler: any FloatingPointCounterHandler) {
        prometheus.destroyFloatingPointCounter(handler)
    }
    func destroyMeter(_ handler: any MeterHandler) { prometheus.destroyMeter(handler) }
    func destroyRecorder(_ handler: any RecorderHandler) { prometheus.destroyRecorder(handler) }
    /// Timers stay: one per label and dimensions for the application's life, as the registry keeps its metrics.
    func destroyTimer(_ handler: any TimerHandler) {}
}

/// The timers' histograms of one application, one per name and dimensions (asked for twice, the same one), rendered
/// by name in the order first asked for.
final class DurationHistograms: Sendable {
    private let histograms = Mutex<[(key: String, histogram: DurationHistogram)]>([])

    /// The series of `label` and `dimensions`, made with `buckets` the first time it is asked for.
    func histogram(_ label: String, _ dimensions: [(String, String)], buckets: [Duration]) -> DurationHistogram {
        let labels = dimensions.map { "\($0.0)=\"\(Self.escaped($0.1))\"" }.joined(separator: ",")
        let key = label + "{" + labels + "}"
        return histograms.withLock { all in
            if let known = all.first(where: { $0.key == key }) { return known.histogram }
            let bounds = buckets.map(Self.nanoseconds).sorted()
            let made = DurationHistogram(name: label, labels: labels, bounds: bounds)
            all.append((key, made))
            return made
        }
    }

    /// Appends every histogram in the text format: a `# TYPE` line per name, then each series' cumulative buckets,
    /// `+Inf`, sum (seconds) and count.
    func render(into text: inout [UInt8]) {
        let all = histograms.withLock { $0 }
        var typed: Set<String> = []
        // By name, each name's series together (a second dimension set of a name may come after other names).
        var names: [String] = []
        for entry in all where typed.insert(entry.histogram.name).inserted { names.append(entry.histogram.name) }
        for name in names {
            text.append(contentsOf: "# TYPE \(name) histogram\n".utf8)
            for entry in all where entry.histogram.name == name {
                entry.histogram.render(into: &text)
            }
        }
    }

    static func nanoseconds(_ duration: Duration) -> Int64 {
        let (seconds, attoseconds) = duration.components
        return seconds * 1_000_000_000 + attoseconds / 1_000_000_000
    }

    /// A label value as the text format quotes it.
    static func escaped(_ value: String) -> String {
        value.replacing("\\", with: "\\\\").replacing("\"", with: "\\\"").replacing("\n", with: "\\n")
    }
}

/// One series of durations: a count per bucket (not cumulative: a record adds to one) and the sum in nanoseconds, each
/// an atomic, so records from any thread take no lock. A scrape reads them one after another: a record landing in
/// between may show in a bucket and not yet in the sum, as with any lock-free Prometheus client; the count is the
/// buckets' total, so it always matches `+Inf`. `@unchecked Sendable`: the counts lie behind a pointer the class
/// allocates once and frees in `deinit`, and every access to them is an atomic operation.
final class DurationHistogram: TimerHandler, @unchecked Sendable {
    let name: String
    /// The series' labels as rendered (`key="value",...`), empty for none.
    let labels: String
    /// The bucket bounds in nanoseconds, ascending, and each as the text format's `le` writes it: seconds, exactly.
    private let bounds: [Int64]
    private let boundTexts: [String]
    /// One count per bound, then the count above the last bound.
    private let counts: UnsafeMutablePointer<Atomic<Int>>
    private let sum = Atomic<Int64>(0)

    init(name: String, labels: String, bounds: [Int64]) {
        self.name = name
        self.labels = labels
        self.bounds = bounds
        boundTexts = bounds.map(Self.seconds)
        counts = .allocate(capacity: bounds.count + 1)
        for index in 0...bounds.count { (counts + index).initialize(to: Atomic(0)) }
    }

    deinit {
        counts.deinitialize(count: bounds.count + 1)
        counts.deallocate()
    }

    func recordNanoseconds(_ duration: Int64) {
        var index = 0
        while index < bounds.count, duration > bounds[index] { index += 1 }
        counts[index].add(1, ordering: .relaxed)
        sum.add(duration, ordering: .relaxed)
    }

    func render(into text: inout [UInt8]) {
        let prefix = labels.isEmpty ? "{" : "{" + labels + ","
        var cumulative = 0
        for index in 0...bounds.count {
            cumulative += counts[index].load(ordering: .relaxed)
            let bound = index < bounds.count ? boundTexts[index] : "+Inf"
            text.append(contentsOf: "\(name)_bucket\(prefix)le=\"\(bound)\"} \(cumulative)\n".utf8)
        }
        let series = labels.isEmpty ? "" : "{" + labels + "}"
        let nanoseconds = sum.load(ordering: .relaxed)
        text.append(contentsOf: "\(name)_sum\(series) \(Self.seconds(nanoseconds))\n".utf8)
        text.append(contentsOf: "\(name)_count\(series) \(cumulative)\n".utf8)
    }

    /// Nanoseconds as seconds, exactly: whole seconds, then up to nine decimals without trailing zeros.
    static func seconds(_ nanoseconds: Int64) -> String {
        let sign = nanoseconds < 0 ? "-" : ""
        let magnitude = nanoseconds.magnitude
        let whole = magnitude / 1_000_000_000
        var fraction = magnitude % 1_000_000_000
        guard fraction > 0 else { return "\(sign)\(whole).0" }
        var digits = 9
        while fraction % 10 == 0 {
            fraction /= 10
            digits -= 1
        }
        let decimals = String(fraction)
        return sign + "\(whole)." + String(repeating: "0", count: digits - decimals.count) + decimals
    }
}
