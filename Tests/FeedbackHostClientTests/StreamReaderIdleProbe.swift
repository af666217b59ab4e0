import FeedbackHostTesting
import Foundation
import Testing

@testable import FeedbackHostClient

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// What an open, idle stream read through URLSession's data delegate costs this process (run with
/// `CLIENT_BENCH_SECONDS`; it measures, it asserts nothing).
@Suite(.serialized, .timeLimit(.minutes(1)))
struct StreamReaderIdleProbe {
    @Test(.enabled(if: StoreFollowBenchmark.seconds > 0)) func anIdleStreamReader() async throws {
        try await withLocalInstance { instance in
            let data = try await instance.request("POST", "/v1/sessions", body: Data(#"{"system":"counter"}"#.utf8))
            let id = (try JSONSerialization.jsonObject(with: data) as? [String: Any])?["id"] as? String ?? ""
            let before = StoreFollowBenchmark.usage()
            let reader = EventStreamReader(
                request: URLRequest(
                    url: instance.url.appendingPathComponent("/v1/sessions/\(id)/stream"),
                    timeoutInterval: Double(ProcessInfo.processInfo.environment["PROBE_TIMEOUT"] ?? "60") ?? 60
                )
            )
            try await Task.sleep(for: .seconds(2))
            let after = StoreFollowBenchmark.usage()
            reader.cancel()
            print(
                "idle reader: user \(after.user - before.user) s system \(after.system - before.system) s switches "
                    + "\(after.switches - before.switches)"
            )
        }
    }
}
