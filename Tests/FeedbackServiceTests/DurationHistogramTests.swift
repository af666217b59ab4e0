import CoreMetrics
import Dispatch
import Prometheus
import Testing

@testable import FeedbackService

/// The timers' histograms `/metrics` renders after the registry's (`ServiceMetricsFactory`): the text format's buckets,
/// sum and count, one series per name and dimensions, and records from many threads counted without a lock.
@Suite struct DurationHistogramTests {
    private func lines(_ histograms: DurationHistograms) -> [String] {
        var text: [UInt8] = []
        histograms.render(into: &text)
        return String(decoding: text, as: UTF8.self).split(separator: "\n").map(String.init)
    }

    @Test func bucketsAreCumulativeAndTheSumIsExact() {
        let histograms = DurationHistograms()
        let timer = histograms.histogram(
            "op_duration_seconds",
            [],
            buckets: [.milliseconds(10), .milliseconds(1), .seconds(1)]
        )
        for nanoseconds: Int64 in [126, 1_000_000, 1_000_001, 2_500_000_000] { timer.recordNanoseconds(nanoseconds) }
        #expect(
            lines(histograms) == [
                "# TYPE op_duration_seconds histogram",
                #"op_duration_seconds_bucket{le="0.001"} 2"#,  // a bound holds the durations equal to it
                #"op_duration_seconds_bucket{le="0.01"} 3"#,
                #"op_duration_seconds_bucket{le="1.0"} 3"#,
                #"op_duration_seconds_bucket{le="+Inf"} 4"#,
                "op_duration_seconds_sum 2.502000127",
                "op_duration_seconds_count 4",
            ]
        )
    }

    @Test func oneSeriesPerNameAndDimensionsUnderOneTypeLine() {
        let histograms = DurationHistograms()
        let second: [Duration] = [.seconds(1)]
        let get = histograms.histogram("fetch_seconds", [("host", "a")], buckets: second)
        histograms.histogram("other_seconds", [], buckets: second).recordNanoseconds(5)
        let post = histograms.histogram("fetch_seconds", [("host", "b\"c")], buckets: second)
        #expect(histograms.histogram("fetch_seconds", [("host", "a")], buckets: [.seconds(9)]) === get)
        get.recordNanoseconds(2_000_000_000)
        post.recordNanoseconds(1)
        #expect(
            lines(histograms) == [
                "# TYPE fetch_seconds histogram",
                #"fetch_seconds_bucket{host="a",le="1.0"} 0"#,
                #"fetch_seconds_bucket{host="a",le="+Inf"} 1"#,
                #"fetch_seconds_sum{host="a"} 2.0"#,
                #"fetch_seconds_count{host="a"} 1"#,
                #"fetch_seconds_bucket{host="b\"c",le="1.0"} 1"#,
                #"fetch_seconds_bucket{host="b\"c",le="+Inf"} 1"#,
                #"fetch_seconds_sum{host="b\"c"} 0.000000001"#,
                #"fetch_seconds_count{host="b\"c"} 1"#,
                "# TYPE other_seconds histogram",
                #"other_seconds_bucket{le="1.0"} 1"#,
                #"other_seconds_bucket{le="+Inf"} 1"#,
                "other_seconds_sum 0.000000005",
                "other_seconds_count 1",
            ]
        )
    }

    @Test func recordsFromManyThreadsAreAllCounted() {
        let histograms = DurationHistograms()
        let timer = histograms.histogram("work_seconds", [], buckets: [.microseconds(1), .milliseconds(1)])
        DispatchQueue.concurrentPerform(iterations: 8) { thread in
            for index in 0..<10_000 { timer.recordNanoseconds(Int64(thread * 10_000 + index) % 3 * 1_000) }
        }
        let rendered = lines(histograms)
        #expect(rendered.contains(#"work_seconds_bucket{le="0.000001"} 53334"#))  // 0 and 1,000 ns
        #expect(rendered.contains("work_seconds_count 80000"))
        #expect(rendered.contains("work_seconds_sum 0.079999"))  // 26,667 of 1,000 ns and 26,666 of 2,000 ns
    }

    @Test func theFactoryHandsTimersToTheHistogramsAndTheRestToPrometheus() {
        let registry = PrometheusCollectorRegistry()
        var prometheus = PrometheusMetricsFactory(registry: registry)
        prometheus.durationHistogramBuckets["fine_seconds"] = [.microseconds(10)]
        prometheus.nameAndLabelSanitizer = { label, dimensions in (label.lowercased(), dimensions) }
        let factory = ServiceMetricsFactory(prometheus)
        Timer(label: "t_seconds", dimensions: [], factory: factory).recordNanoseconds(3)
        Timer(label: "FINE_seconds", dimensions: [], factory: factory).recordNanoseconds(20_000)
        Counter(label: "c_total", dimensions: [], factory: factory).increment()
        let text = String(decoding: registry.emitToBuffer(), as: UTF8.self)
        #expect(text.contains("c_total 1"))
        #expect(!text.contains("t_seconds"))
        let timers = lines(factory.timers)
        #expect(timers.contains("t_seconds_count 1"))
        // The factory's default buckets for one label, its own buckets and sanitised name for the other.
        #expect(timers.contains(#"t_seconds_bucket{le="0.005"} 1"#))
        #expect(
            timers.filter { $0.hasPrefix("fine_seconds_bucket") } == [
                #"fine_seconds_bucket{le="0.00001"} 0"#, #"fine_seconds_bucket{le="+Inf"} 1"#,
            ]
        )
    }
}
