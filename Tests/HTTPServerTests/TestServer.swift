import Dispatch
import HTTPServer
import Logging
import Synchronization

/// Starts a server on 127.0.0.1:0 for one test and shuts it down afterwards.
func withServer(
    _ configuration: HTTPServerConfiguration = HTTPServerConfiguration(host: "127.0.0.1", port: 0),
    router: Router,
    _ body: (Int) async throws -> Void
) async throws {
    var configuration = configuration
    configuration.host = "127.0.0.1"
    configuration.port = 0
    var logger = Logger(label: "HTTPServerTests")
    logger.logLevel = .warning
    let server = Server(configuration: configuration, router: router, logger: logger)
    let port = try server.start()
    do {
        try await body(port)
    } catch {
        await server.shutdown(deadline: .seconds(1))
        throw error
    }
    await server.shutdown(deadline: .seconds(1))
}

/// Values sent by server callbacks to a test, which waits for each with a bound (polling, never asserting time).
final class Signal<Value: Sendable>: Sendable {
    private let values = Mutex<[Value]>([])

    func send(_ value: Value) { values.withLock { $0.append(value) } }

    /// The next value, or nil when none came within `seconds`.
    func next(within seconds: Int = 5) async -> Value? {
        for _ in 0..<(seconds * 100) {
            if let value = values.withLock({ $0.isEmpty ? nil : $0.removeFirst() }) { return value }
            try? await Task.sleep(for: .milliseconds(10))
        }
        return nil
    }
}

/// Runs blocking socket work on a Dispatch thread, so blocked reads never starve the cooperative pool
/// that async handlers need.
func offPool<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        DispatchQueue.global().async {
            continuation.resume(with: Result { try work() })
        }
    }
}
