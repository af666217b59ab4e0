public import Configuration
public import CurlClient
import DemoUpstream
public import HTTPServer
public import Logging
import Metrics
import Prometheus
import SessionAuth
import SessionInspection
public import SessionJournal
import SessionStreams
import Synchronization
import SystemKit

/// The whole server, assembled from one configuration key space: what `feedback-host` runs and what tests start.
///
/// Keys (flags `--key-name`, environment `FEEDBACKHOST_KEY_NAME`, then defaults): `host`, `port`,
/// `sessions.max.active`, `sessions.max.bytes`, `session.state.max.bytes`, `max.event.body.bytes`, `max.events.per.batch`, `max.connections`, `cors.origins`,
/// `shutdown.deadline.ms`, `shutdown.delay.ms`, and the stream keys: `stream.heartbeat.ms`, `stream.stall.ms` (also the write timeout
/// of every response), `stream.max.per.session`, `stream.max.total`, `stream.drain.ms`, `stream.retry.ms`, `stream.linger.ms`,
/// `stream.highwater.bytes`, `stream.gzip`. It is a swift-service-lifecycle `Service`: run it in a `ServiceGroup`.
/// The `paging` system reads `upstream` and `upstream.*`, `paging.*` from the same reader (`PagingConfiguration`);
/// the server itself serves the demo catalog at `/demo/catalog`.
/// `log.format`, `log.access`, `log.access.level`, `log.access.buffer.bytes`, `log.access.flush.ms` (the access log).
/// `data.dir`, `fsync`, `journal.snapshot.interval`, `journal.commit.delay.us`, `journal.probe.ms` (see
/// `openJournal(reader:logger:metricsFactory:vfs:)`).
public final class ServiceApplication: Sendable {
    /// This build's version, printed by `feedback-host --version`.
    public static let version = "0.4.0"

    /// The HTTP server, not yet started.
    public let server: Server
    /// The session API.
    public let service: SessionService
    /// The upstream client the feedbacks fetch with.
    public let upstream: CurlFetcher
    /// How long a graceful shutdown may take before connections are cut (`shutdown.deadline.ms`, 10 s).
    public let shutdownDeadline: Duration
    /// How long a shutdown keeps serving with `/readyz` failing before it drains (`shutdown.delay.ms`, 0; at most
    /// a quarter of the deadline).
    public let shutdownDelay: Duration
    let logger: Logger
    private let expiry = Mutex<Task<Void, Never>?>(nil)
    private let waker = Mutex<Task<Void, Never>?>(nil)
    private let retention = Mutex<Task<Void, Never>?>(nil)
    private let ownership = Mutex<Task<Void, Never>?>(nil)
    /// How often followed sessions' ownership is confirmed with a shared journal; nil for never.
    let ownershipWatch: Duration?
    /// `http://HOST:PORT` of the listener once started: the sessions' `SystemEnvironment.localBaseURL`.
    private let localBaseURL: LocalBaseURL
    /// The clock tests move (`--clock manual` or `skip`); nil when timers follow the real time.
    public let clock: ServiceClock?

    init(
        server: Server,
        service: SessionService,
        upstream: CurlFetcher,
        shutdownDeadline: Duration = .seconds(10),
        shutdownDelay: Duration = .zero,
        localBaseURL: LocalBaseURL,
        clock: ServiceClock? = nil,
        ownershipWatch: Duration? = SessionHost.ownershipWatchInterval,
        logger: Logger
    ) {
        self.clock = clock
        self.ownershipWatch = ownershipWatch
        self.server = server
        self.service = service
        self.upstream = upstream
        self.shutdownDeadline = shutdownDeadline
        self.shutdownDelay = shutdownDelay
        self.localBaseURL = localBaseURL
        self.logger = logger
    }

    /// Starts serving, passivating idle sessions and waking passive ones whose timers are due; returns the port.
    public func start() throws(HTTPServerError) -> Int {
        let port = try server.start()
        localBaseURL.set(port: port)
        let service = service
        expiry.withLock { $0 = Task { await service.host.expireIdleSessions() } }
        if let clock {
            // A manual clock's advance wakes passive sessions itself; a skipping one advances by itself.
            if clock.mode == .skip { waker.withLock { $0 = Task { await service.host.skipClock(clock) } } }
        } else {
            waker.withLock { $0 = Task { await service.host.wakeSessionsWithDueTimers(on: .system) } }
        }
        // Retention counts real time whatever the sessions' clock: ages of days are an operator's, not a test's.
        retention.withLock { $0 = Task { await service.host.deleteAbandonedSessions(on: .system) } }
        // With a shared journal: followed sessions another replica took end their streams here (`event: moved`).
        if let ownershipWatch {
            ownership.withLock { $0 = Task { await service.host.watchOwnership(every: ownershipWatch) } }
        }
        return port
    }

    /// Builds the application from `reader` with `systems` registered, and restores the journaled sessions.
    /// Throws when the journal's directory or file cannot be used, another process holds the directory, or the token
    /// revocations file of an earlier version cannot be read (`RevocationFile`). `journalVFS` is for tests only (see `openJournal`).
    public static func build(
        reader: ConfigReader,
        systems: [HostedSystem],
        logger: Logger,
        journalVFS: String? = nil
    ) throws(JournalError) -> ServiceApplication {
        // One registry per application, rendered on /metrics; tests can run several servers in one process.
        let registry = PrometheusCollectorRegistry()
        var prometheus = PrometheusMetricsFactory(registry: registry)
        prometheus.valueHistogramBuckets.merge(Journal.batchSizeBuckets) { mine, _ in mine }
        prometheus.defaultDurationHistogramBuckets = ServiceMetricsFactory.durationBuckets
        let metricsFactory = ServiceMetricsFactory(prometheus)
        let timers = metricsFactory.timers
        let journaled = try openJournal(
            reader: reader,
            logger: logger,
            metricsFactory: metricsFactory,
            vfs: journalVFS,
            systemRetention: Dictionary(
                systems.compactMap { system in system.historyRetention.map { (system.name, $0) } },
                uniquingKeysWith: { first, _ in first }
            )
        )
        let directory = reader.string(.dataDirectory)
        if let journaled, directory != "none", !directory.isEmpty {
            // Before any session is in memory: each is read back with the generation adopted.
            do {
                try RevocationFile.adopt(in: directory, into: journaled.persistence.journal, logger: logger)
            } catch {
                journaled.persistence.journal.close()
                journaled.persistence.marks.close()
                throw error
            }
        }
        let cors = reader.list(.corsOrigins)
        var configuration = ServiceConfiguration(
            maxActiveSessions: reader.int(.maxActiveSessions),
            maxSessionBytes: reader.int(.sessionsMaxBytes),
            maxStateBytes: reader.int(.sessionStateMaxBytes),
            maxEventBodyBytes: reader.int(.maxEventBodyBytes),
            maxEventsPerBatch: reader.int(.maxEventsPerBatch),
            inboxCapacity: reader.int(.inboxSize),
            cors: CORSPolicy(allowedOrigins: Set(cors)),
            sessionIdle: .milliseconds(reader.int(.sessionIdle)),
            wakeRate: reader.int(.sessionWakeRate),
            activationRate: reader.int(.sessionActivationRate),
            retention: Setting.retentionAge(reader.string(.sessionRetention)) ?? nil,
            streams: streamConfiguration(reader)
        )
        configuration.auth = authConfiguration(reader, logger: logger)
        configuration.inspector = inspectorOn(reader)
        configuration.clientsPerSession = reader.int(.sessionClientsMax)
        let upstream = CurlFetcher(logger: logger, metricsFactory: metricsFactory)
        let manualClock = makeClock(reader, logger: logger)
        let clock: any Clock<Duration> = manualClock?.clock ?? ContinuousClock()
        let host = reader.string(.host)
        let localBaseURL = LocalBaseURL(host: host)
        let service = SessionService(
            configuration: configuration,
            systems: systems,
            metricsFactory: metricsFactory,
            persistence: journaled?.persistence
        ) { id in
            var sessionLogger = logger
            sessionLogger[metadataKey: "session.id"] = "\(id)"
            return SystemEnvironment(
                clock: clock,
                wallClock: manualClock?.wallClock ?? .system,
                upstream: upstream,
                logger: sessionLogger,
                localBaseURL: localBaseURL.value,
                effectTracker: manualClock?.clock
            )
        }
        service.metrics.clockManual.record(manualClock == nil ? 0 : 1)
        if let journaled { start(journaled, service: service, logger: logger) }
        if reader.bool(.verifyOnStart) {
            service.host.verifyBeforeReady(
                systems: systems,
                maxDivergent: reader.int(.verifyMaxDivergent),
                logger: logger
            )
        }
        var router = Router()
        service.register(in: &router)
        if let manualClock {
            service.registerClock(manualClock, in: &router)
            service.metrics.clockNow.record(Double(manualClock.now().millisecondsSince1970) / 1000)
        }
        WebPage.register(in: &router)
        DemoCatalog().register(in: &router)
        router.get("/metrics") { _ in
            Response(
                status: 200,
                headers: HTTPHeaders([("Content-Type", "text/plain; version=0.0.4; charset=utf-8")]),
                body: {
                    var text = registry.emitToBuffer()
                    timers.render(into: &text)
                    return text
                }()
            )
        }
        let server = Server(
            configuration: HTTPServerConfiguration(
                host: host,
                port: reader.int(.port),
                maxConnections: reader.int(.maxConnections),
                descriptorReserve: reader.int(.httpDescriptorReserve),
                bodyTimeout: .milliseconds(reader.int(.httpBodyTimeout)),
                minBodyRate: reader.int(.httpBodyMinRate),
                bodyRateGrace: .milliseconds(reader.int(.httpBodyGrace)),
                writeTimeout: .milliseconds(reader.int(.streamStall)),
                streamHighWaterMark: reader.int(.streamHighWater),
                // Off by default: a deflate stream per subscriber costs ~12 KiB and one compression per event per
                // subscriber, where uncompressed frames are shared by all.
                compressStreams: reader.bool(.streamGzip),
                metricsFactory: metricsFactory
            ),
            router: router,
            logger: logger,
            accessLog: accessLog(reader, logger: logger)
        )
        if let writersIdle = journaled?.persistence.journal.whenWritersIdle {
            // A gathering window ends once no shard has a post left to hand it (`Journal.endGatheringWindow`).
            server.whenIdle(writersIdle)
        }
        return ServiceApplication(
            server: server,
            service: service,
            upstream: upstream,
            shutdownDeadline: .milliseconds(reader.int(.shutdownDeadline)),
            shutdownDelay: .milliseconds(reader.int(.shutdownDelay)),
            localBaseURL: localBaseURL,
            clock: manualClock,
            ownershipWatch: reader.int(.journalOwnershipWatch) > 0
                ? .milliseconds(reader.int(.journalOwnershipWatch)) : nil,
            logger: logger
        )
    }

    /// The access log `log.access*` asks for (`on`: in `log.format`), or nil when it is off or its level is below
    /// the logger's.
    static func accessLog(_ reader: ConfigReader, logger: Logger) -> AccessLog? {
        let access = reader.string(.logAccess)
        guard let format = AccessLog.Format(rawValue: access == "on" ? reader.string(.logFormat) : access),
            let level = Logger.Level(rawValue: reader.string(.logAccessLevel)), level >= logger.logLevel
        else { return nil }
        return AccessLog(
            configuration: AccessLog.Configuration(
                format: format,
                level: level.rawValue,
                bufferBytes: reader.int(.logAccessBufferBytes),
                flushInterval: .milliseconds(reader.int(.logAccessFlush))
            )
        )
    }

    /// The stream keys: `stream.heartbeat.ms`, `stream.max.per.session`, `stream.max.total`, `stream.drain.ms`,
    /// `stream.retry.ms`, `stream.linger.ms`, `stream.write.part`.
    static func streamConfiguration(_ reader: ConfigReader) -> StreamConfiguration {
        StreamConfiguration(
            heartbeat: .milliseconds(reader.int(.streamHeartbeat)),
            maxPerSession: reader.int(.streamMaxPerSession),
            maxTotal: reader.int(.streamMaxTotal),
            drainWindow: .milliseconds(reader.int(.streamDrain)),
            retry: .milliseconds(reader.int(.streamRetry)),
            linger: .milliseconds(reader.int(.streamLinger)),
            writePart: reader.int(.streamWritePart)
        )
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

    /// Fails readiness, closes the session streams spread over the drain window (at most half the deadline), stops
    /// accepting, finishes in-flight requests, stops every session and the upstream client.
    public func shutdown(deadline: Duration) async {
        let start = ContinuousClock.now
        service.beginDraining()
        expiry.withLock { $0?.cancel() }
        waker.withLock { $0?.cancel() }
        retention.withLock { $0?.cancel() }
        ownership.withLock { $0?.cancel() }
        // Readiness fails but everything else is served for a while, so that a balancer polling /readyz stops
        // sending new work before the listener closes.
        if shutdownDelay > .zero { try? await Task.sleep(for: min(shutdownDelay, deadline / 4)) }
        await service.drainStreams(within: (deadline - (ContinuousClock.now - start)) / 2)
        await server.shutdown(deadline: max(deadline - (ContinuousClock.now - start), .milliseconds(100)))
        service.stopAll()
        clock?.save()
        service.persistence?.journal.close()
        service.persistence?.marks.close()
        await upstream.shutdown()
    }
}
