import ConformanceChecks
import CurlClient
import Dispatch
import Foundation
import Upstream

/// Runs blocking work (starting or stopping a process, a `curl` run) on a thread of its own, never on the
/// cooperative pool.
func offPool<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<T, any Error>) in
        DispatchQueue(label: "test.blocking").async { continuation.resume(with: Result { try body() }) }
    }
}

/// The session API over loopback through the project's own client (async, bounded by its timeouts).
struct SessionAPIClient: Sendable {
    let base: String
    let client: CheckedFetcher

    init(port: Int) {
        base = "http://127.0.0.1:\(port)"
        client = CheckedFetcher()
    }

    /// Creates a session; returns its id.
    func create(_ system: String = "counter", state: String? = nil) async throws -> String {
        let body = state.map { #"{"system":"\#(system)","state":\#($0)}"# } ?? #"{"system":"\#(system)"}"#
        let response = try await send("POST", "/v1/sessions", body: body)
        let object = try JSONSerialization.jsonObject(with: Data(response.body)) as? [String: Any]
        guard response.status == 201, let id = object?["id"] as? String else {
            throw SSEReader.Timeout(what: "a created session (got \(response.status) \(response.bodyText))")
        }
        return id
    }

    /// Posts events; returns the answer's JSON object.
    @discardableResult
    func post(_ id: String, _ event: String) async throws -> [String: Any] {
        let response = try await send("POST", "/v1/sessions/\(id)/events", body: event)
        return (try JSONSerialization.jsonObject(with: Data(response.body)) as? [String: Any]) ?? [:]
    }

    func send(_ method: String, _ path: String, body: String? = nil) async throws -> UpstreamResponse {
        try await client.fetch(
            UpstreamRequest(
                method: method,
                url: base + path,
                headers: body == nil ? [:] : ["Content-Type": "application/json"],
                body: body.map { Array($0.utf8) },
                totalTimeoutMilliseconds: 10_000
            )
        )
    }

    func shutdown() async { await client.shutdown() }

    /// The value of a Prometheus sample line (`name{labels}`) on `/metrics`, or 0 when absent.
    func metric(_ sample: String) async throws -> Double {
        let text = try await send("GET", "/metrics").bodyText
        let line = text.split(separator: "\n").first { $0.hasPrefix(sample + " ") }
        return line.flatMap { Double($0.split(separator: " ").last ?? "") } ?? 0
    }

    /// Polls `sample` until it reaches `value` (the server's own timers move it), at most 800 polls 20 ms apart;
    /// false if it never does.
    func metric(_ sample: String, reaches value: Double) async throws -> Bool {
        for _ in 0..<800 {
            if try await metric(sample) >= value { return true }
            try await Task.sleep(for: .milliseconds(20))
        }
        return false
    }
}

/// A started binary with an API client; `stop` ends both.
struct StreamTestServer {
    let server: RunningServer
    let api: SessionAPIClient

    /// Starts the binary; unless told otherwise, open streams close within 200 ms of a SIGTERM. With `FH_DEBUG_LOG`
    /// set to a path prefix, each server's standard error goes to a file of that prefix (for debugging a test).
    static func start(_ arguments: [String] = []) async throws -> StreamTestServer {
        let flags = arguments.contains("--stream-drain-ms") ? arguments : arguments + ["--stream-drain-ms", "200"]
        let log = ProcessInfo.processInfo.environment["FH_DEBUG_LOG"].map { URL(fileURLWithPath: $0 + "-\(UUID())") }
        let server = try await offPool { try RunningServer(arguments: flags, errorLog: log) }
        return StreamTestServer(server: server, api: SessionAPIClient(port: server.port))
    }

    var port: Int { server.port }

    func reader(_ path: String, headers: [String] = [], receiveBuffer: Int? = nil) throws -> SSEReader {
        try SSEReader(port: port, path: path, headers: headers, receiveBuffer: receiveBuffer)
    }

    func stop() async {
        await api.shutdown()
        let server = server
        _ = try? await offPool { server.stop() }
    }
}

/// An SSE event's data as a JSON object.
func jsonObject(_ text: String) -> [String: Any] {
    (try? JSONSerialization.jsonObject(with: Data(text.utf8))) as? [String: Any] ?? [:]
}
