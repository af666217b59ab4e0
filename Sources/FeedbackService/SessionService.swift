import Dispatch
public import HTTPServer
public import Metrics
import SessionAuth
import SessionJournal
import SessionStreams
import Synchronization
public import SystemKit

/// The REST API over the hosted sessions: the routes of `/v1` and the health endpoints.
///
/// Thread-safe: handlers run on any shard queue (synchronous ones) or in Tasks (posting events, which waits for
/// the loop); the session store and each session's loop carry their own locks.
public final class SessionService: Sendable {
    let configuration: ServiceConfiguration
    let systems: [String: HostedSystem]
    let systemOrder: [String]
    let store: SessionStore
    /// Each new or restored session's environment: its system's, plus the service's reduce timer.
    let environment: @Sendable (SessionID) -> SessionEnvironment
    let metrics: ServiceMetrics
    /// The memory all sessions hold together (`sessions.max.bytes`), and the per-state limit.
    let budget: SessionBudget
    let streams: StreamRegistry
    /// The journal, when sessions are durable (`--data-dir`); nil when they live only in memory.
    let persistence: SessionPersistence?
    /// Keys the fingerprints of `Idempotency-Key` bodies: with the journal's key when there is one, so that
    /// fingerprints restored after a restart still compare.
    let fingerprints: SipHash
    /// The token checks of `--auth jwt`; nil when auth is off.
    let authorizer: Authorizer?
    private let draining = Atomic<Bool>(false)
    /// Why `/readyz` fails besides draining and the journal (a verification running or failed); nil for nothing.
    let readinessHold = Mutex<APIError?>(nil)
    /// Passivations and activations take turns under it, so a session is never read back from the journal while
    /// its passivated copy could still append: see `activeSession` and `expireIdleSessions`.
    let activation = Mutex(())
    /// Spaces the first upstream fetches of activated sessions (`session.activation.rate`).
    let activationThrottle: ActivationThrottle

    /// Creates the service with its systems; `environment` gives each new session its clock, upstream and logger.
    public init(
        configuration: ServiceConfiguration,
        systems: [HostedSystem],
        metricsFactory: any MetricsFactory = MetricsSystem.factory,
        persistence: SessionPersistence? = nil,
        environment: @escaping @Sendable (SessionID) -> SystemEnvironment
    ) {
        self.persistence = persistence
        fingerprints = persistence.map { SipHash(key: $0.journal.fingerprintKey) } ?? SipHash()
        self.configuration = configuration
        authorizer = configuration.auth.map(Authorizer.init(configuration:))
        var byName: [String: HostedSystem] = [:]
        for system in systems {
            precondition(byName[system.name] == nil, "two systems are named \(system.name)")
            byName[system.name] = system
        }
        self.systems = byName
        systemOrder = systems.map(\.name)
        store = SessionStore(capacity: configuration.maxActiveSessions)
        let metrics = ServiceMetrics(factory: metricsFactory)
        self.metrics = metrics
        activationThrottle = ActivationThrottle(rate: configuration.activationRate, waits: metrics.activationFetchWait)
        let budget = SessionBudget(
            limit: configuration.maxSessionBytes,
            stateLimit: configuration.maxStateBytes,
            gauge: metrics.sessionBytes
        )
        self.budget = budget
        metrics.sessionBytesLimit.record(Double(configuration.maxSessionBytes))
        self.environment = { id in
            SessionEnvironment(system: environment(id), reduceTimer: metrics.reduceDuration, budget: budget)
        }
        streams = StreamRegistry(
            configuration: configuration.streams,
            metrics: StreamMetrics(factory: metricsFactory)
        )
        persistence?.onHealed { [weak self] in self?.reanchorFencedSessions() }
        persistence?.onSuperseded { [weak self] id in self?.dropSuperseded(id) }
    }

    /// Whether the service is shutting down: `/readyz` fails and no new session starts.
    public var isDraining: Bool { draining.load(ordering: .relaxed) }

    /// Marks the service as shutting down, so load balancers stop sending it new work.
    public func beginDraining() {
        draining.store(true, ordering: .relaxed)
    }

    /// The number of live sessions.
    public var sessionCount: Int { store.count }

    /// The bytes all sessions hold, as the budget counts them (`feedbackhost_sessions_bytes`).
    public var sessionBytes: Int { budget.bytes }

    /// Adds the service's routes to `router`.
    public func register(in router: inout Router) {
        router.get("/healthz") { _ in Response.json(Array(#"{"status":"ok"}"#.utf8)) }
        router.get("/readyz") { [self] _ in
            if isDraining {
                return Self.problem(
                    APIError(.draining, "the server is shutting down; use another replica", retryAfter: 1)
                )
            }
            if let hold = readinessHold.withLock({ $0 }) { return Self.problem(hold) }
            // A journal that cannot commit takes no writes: a balancer should send them to another replica.
            if let refusal = persistence?.writeRefusal() {
                return Self.problem(APIError(.journalUnavailable, refusal.message, retryAfter: refusal.retryAfter))
            }
            return Response.json(Array(#"{"status":"ready"}"#.utf8))
        }
        registerPreflights(in: &router)
        router.get("/v1/systems") { [self] request in respond(to: request) { listSystems() } }
        // Every session route passes the token check of `guarded` first (with auth off, it adds nothing).
        let maxBody = configuration.maxEventBodyBytes
        let create = guarded(.creation) { [self] request, _, responder in
            answerOnceDurable(request, responder) { () throws(APIError) in try withTokens(createSession(request)) }
        }
        let get = guarded(.session(.read)) { [self] request, _ in
            respond(to: request) { () throws(APIError) in try getSession(request) }
        }
        let put = guarded(.creation) { [self] request, grant, responder in
            answerOnceDurable(request, responder) { () throws(APIError) in
                try withTokens(putSession(request), authorized: grant != nil)
            }
        }
        let delete = guarded(.session(.admin)) { [self] request, _ in
            respond(to: request) { () throws(APIError) in try deleteSession(request) }
        }
        let stream = guarded(.session(.read), streamRoute: true) { [self] request, grant in
            respond(to: request) { () throws(APIError) in try openStream(request, tokenExpiry: grant?.expiry) }
        }
        let post = guarded(.session(.post)) { [self] request, _, responder in
            // The answer keeps only the request's `Origin`, not a copy of the whole request.
            let origin = request.headers["origin"]
            postEvents(request) { [self] result in
                switch result {
                case .success(let snapshot):
                    var response = Response.json(snapshot.body())
                    response.headers.add(name: "ETag", value: snapshot.cursor.entityTag)
                    responder.respond(withCORS(response, origin: origin))
                case .failure(let error):
                    metrics.eventsRejected.increment()
                    responder.respond(withCORS(Self.problem(error), origin: origin))
                }
            }
        }
        router.route(.post, "/v1/sessions", maxBodySize: maxBody, handler: create)
        router.route(.get, "/v1/sessions/{id}", handler: get)
        router.route(.put, "/v1/sessions/{id}", maxBodySize: maxBody, handler: put)
        router.route(.delete, "/v1/sessions/{id}", handler: delete)
        router.route(.get, "/v1/sessions/{id}/stream", handler: stream)
        router.route(.post, "/v1/sessions/{id}/events", maxBodySize: maxBody, handler: post)
        registerTokenRoutes(in: &router)
        registerExport(in: &router)
    }

    /// Answers CORS preflights (`OPTIONS`) on the API's paths from the configured policy: 204 with the allowed
    /// method and headers, or 403 with the reason.
    func registerPreflights(in router: inout Router) {
        for path in [
            "/v1/systems", "/v1/sessions", "/v1/sessions/{id}", "/v1/sessions/{id}/events", "/v1/sessions/{id}/stream",
            "/v1/sessions/{id}/export",
        ] {
            router.route(.options, path, maxBodySize: 0) { [self] (request: Request) throws -> Response in
                let answer = configuration.cors.preflight(
                    origin: request.headers["origin"],
                    method: request.headers["access-control-request-method"],
                    headers: request.headers["access-control-request-headers"]
                )
                switch answer {
                case .allowed(let headers):
                    return Response(status: 204, headers: HTTPHeaders(headers.map { ($0.name, $0.value) }))
                case .refused(let reason):
                    var response = Self.problem(APIError(.corsRefused, reason))
                    response.headers.add(name: "Vary", value: "Origin")
                    return response
                }
            }
        }
    }

    /// Passivates (with a journal) or ends (without) the sessions idle for longer than `session.idle.ms`, checking
    /// every quarter of it, until the task that runs this is cancelled. A session with an open stream is not idle.
    public func expireIdleSessions() async {
        let idle = configuration.sessionIdle
        let idleNanoseconds =
            UInt64(idle.components.seconds) * 1_000_000_000
            + UInt64(idle.components.attoseconds / 1_000_000_000)
        while !Task.isCancelled {
            do {
                try await Task.sleep(for: max(idle / 4, .milliseconds(10)))
            } catch {
                return
            }
            let now = DispatchTime.now().uptimeNanoseconds
            guard now > idleNanoseconds else { continue }
            // A watched session is never idle: its stream hub stays in the registry while a stream is open (and
            // for the linger after the last one), and touches the session when it leaves.
            if persistence != nil {
                // Under the activation lock: an activation of one of them waits until its copy here is sealed.
                activation.withLock { _ in
                    for session in store.removeIdle(before: now - idleNanoseconds, sparing: streams.isFollowing) {
                        session.passivate()
                        metrics.sessions.decrement()
                        metrics.sessionsPassive.increment()
                        metrics.sessionsPassivated.increment()
                    }
                }
                continue
            }
            for session in store.removeIdle(before: now - idleNanoseconds, sparing: streams.isFollowing) {
                session.stop()
                streams.end(session.id, reason: .expired)
                metrics.sessions.decrement()
                metrics.sessionsExpired.increment()
            }
        }
    }

    /// Closes every open stream at times spread over the configured drain window (or `limit`, if shorter), so
    /// that clients reconnect to other replicas gradually; returns when all are closed.
    public func drainStreams(within limit: Duration) async {
        await streams.drain(over: min(configuration.streams.drainWindow, limit))
    }

    /// Open session streams.
    public var streamCount: Int { streams.openCount }

    /// Stops every session: effects are cancelled, streams closed.
    public func stopAll() {
        // With a journal, each session is passivated: its snapshot and the mark that nothing follows it are the
        // last thing it journals, so after the restart it is read back by its keys alone.
        for session in store.removeAll() {
            if persistence != nil { session.passivate() } else { session.stop() }
            streams.end(session.id, reason: nil)
            metrics.sessions.decrement()
        }
    }

    // MARK: - Plumbing

    func respond(to request: Request, _ body: () throws(APIError) -> Response) -> Response {
        do {
            return withCORS(try body(), request)
        } catch {
            return withCORS(Self.problem(error), request)
        }
    }

    func withCORS(_ response: Response, _ request: Request) -> Response {
        withCORS(response, origin: request.headers["origin"])
    }

    /// `response` with the CORS fields for a request from `origin` (its `Origin` field, if any).
    func withCORS(_ response: Response, origin: String?) -> Response {
        var response = response
        for (name, value) in configuration.cors.responseHeaders(origin: origin) {
            response.headers.add(name: name, value: value)
        }
        return response
    }

    static func problem(_ error: APIError) -> Response {
        var headers = HTTPHeaders()
        if let retryAfter = error.retryAfter { headers.add(name: "Retry-After", value: String(retryAfter)) }
        if let challenge = error.challenge { headers.add(name: "WWW-Authenticate", value: challenge) }
        return error.problem.response(headers: headers)
    }
}
