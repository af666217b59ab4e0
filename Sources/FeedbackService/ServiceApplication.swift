public import Configuration
public import CurlClient
public import HTTPServer
public import Logging
import Prometheus
public import SessionJournal
import Synchronization

/// The whole server, assembled from one configuration key space: what `feedback-host` runs and what tests start.
///
/// Keys (flags `--key-name`, environment `FEEDBACKHOST_KEY_NAME`, then defaults): `host`, `port`,
/// `max.sessions`, `max.event.body.bytes`, `max.events.per.batch`, `max.connections`, `cors.origins`,
/// `data.dir`, `fsync`, `journal.snapshot.interval` (see `openJournal(reader:logger:)`).
public final class ServiceApplication: Sendable {
    /// The HTTP server, not yet started.
    public let server: HTTPServer
    /// The session API.
    public let service: SessionService
    /// The upstream client the feedbacks fetch with.
    public let upstream: CurlClient
    private let expiry = Mutex<Task<Void, Never>?>(nil)

    init(server: HTTPServer, service: SessionService, upstream: CurlClient) {
        self.server = server
        self.service = service
        self.upstream = upstream
    }

    /// Starts serving and expiring idle sessions; returns the port.
    public func start() throws(HTTPServerError) -> Int {
        let port = try server.start()
        let service = service
        expiry.withLock { $0 = Task { await service.expireIdleSessions() } }
        return port
    }

    /// Builds the application from `reader` with `systems` registered, and restores the journaled sessions.
    /// Throws when the journal's directory or file cannot be used.
    public static func build(
        reader: ConfigReader,
        systems: [HostedSystem],
        logger: Logger
    ) throws(JournalError) -> ServiceApplication {
        let journaled = try openJournal(reader: reader, logger: logger)
        let cors = reader.stringArray(forKey: "cors.origins", default: []).filter { !$0.isEmpty }
        let configuration = ServiceConfiguration(
            maxSessions: reader.int(forKey: "max.sessions", default: 100_000),
            maxEventBodyBytes: reader.int(forKey: "max.event.body.bytes", default: 64 * 1024),
            maxEventsPerBatch: reader.int(forKey: "max.events.per.batch", default: 100),
            inboxCapacity: reader.int(forKey: "inbox.size", default: 1000),
            cors: CORSPolicy(allowedOrigins: Set(cors)),
            sessionIdleTTL: .milliseconds(reader.int(forKey: "session.ttl.ms", default: 3_600_000))
        )
        // One registry per application, rendered on /metrics; tests can run several servers in one process.
        let registry = PrometheusCollectorRegistry()
        let metricsFactory = PrometheusMetricsFactory(registry: registry)
        let upstream = CurlClient(logger: logger)
        let clock = ContinuousClock()
        let service = SessionService(
            configuration: configuration,
            systems: systems,
            metricsFactory: metricsFactory,
            persistence: journaled?.persistence
        ) { id in
            var sessionLogger = logger
            sessionLogger[metadataKey: "session.id"] = "\(id)"
            return SystemEnvironment(clock: clock, upstream: upstream, logger: sessionLogger)
        }
        if let journaled { restore(journaled, into: service, logger: logger) }
        var router = Router()
        service.register(in: &router)
        router.get("/metrics") { _ in
            Response(
                status: 200,
                headers: HTTPHeaders([("Content-Type", "text/plain; version=0.0.4; charset=utf-8")]),
                body: registry.emitToBuffer()
            )
        }
        let server = HTTPServer(
            configuration: HTTPServerConfiguration(
                host: reader.string(forKey: "host", default: "127.0.0.1"),
                port: reader.int(forKey: "port", default: 8080),
                maxConnections: reader.int(forKey: "max.connections", default: 10_000),
                metricsFactory: metricsFactory
            ),
            router: router,
            logger: logger
        )
        return ServiceApplication(server: server, service: service, upstream: upstream)
    }

    /// The reader `feedback-host` uses: command-line flags first, then `FEEDBACKHOST_` environment variables.
    public static func defaultReader(
        arguments: [String],
        environment: [String: String]
    ) -> ConfigReader {
        var scoped: [String: String] = [:]
        for (name, value) in environment where name.hasPrefix("FEEDBACKHOST_") {
            scoped[String(name.dropFirst("FEEDBACKHOST_".count))] = value
        }
        return ConfigReader(providers: [
            CommandLineArgumentsProvider(arguments: arguments),
            EnvironmentVariablesProvider(environmentVariables: scoped),
        ])
    }

    /// Fails readiness, stops accepting, finishes in-flight requests, stops every session and the upstream client.
    public func shutdown(deadline: Duration) async {
        service.beginDraining()
        expiry.withLock { $0?.cancel() }
        await server.shutdown(deadline: deadline)
        service.stopAll()
        service.persistence?.journal.close()
        await upstream.shutdown()
    }
}
