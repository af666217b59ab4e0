import FeedbackService
import Logging
import Systems

/// The service built by `ServiceApplication.build` inside the test process, with the test-only `notes` system
/// registered beside the built-in ones, on 127.0.0.1:0. Flags are given as `feedback-host` would take them.
struct InProcessServer {
    let application: ServiceApplication
    let port: Int
    let api: SessionAPIClient

    static func start(_ flags: [String] = []) throws -> InProcessServer {
        let reader = ServiceApplication.defaultReader(
            arguments: ["feedback-host", "--host", "127.0.0.1", "--port", "0", "--data-dir", "none"] + flags
                + (flags.contains("--stream-drain-ms") ? [] : ["--stream-drain-ms", "200"]),
            environment: [:]
        )
        let application = try ServiceApplication.build(
            reader: reader,
            systems: [HostedSystem(NotesSystem()), HostedSystem(CounterSystem())],
            logger: Logger(label: "stream-tests")
        )
        let port = try application.start()
        return InProcessServer(application: application, port: port, api: SessionAPIClient(port: port))
    }

    func reader(_ path: String, headers: [String] = [], receiveBuffer: Int? = nil) throws -> SSEReader {
        try SSEReader(port: port, path: path, headers: headers, receiveBuffer: receiveBuffer)
    }

    /// The value of a Prometheus sample line (`name{labels}`), or 0 when absent.
    func metric(_ sample: String) async throws -> Double { try await api.metric(sample) }

    func stop() async {
        await api.shutdown()
        await application.shutdown(deadline: .seconds(2))
    }
}
