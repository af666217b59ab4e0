public import HTTPServer
public import Metrics
import SessionAuth
public import SessionRuntime
import SessionStreams
import Synchronization
public import SystemKit

/// The REST API over the hosted sessions (`SessionHost`): the health endpoints and the routes of `/v1`, each an
/// `APIRoute` that `register(_:in:)` puts behind its token check and gives the CORS fields, in one place. It parses
/// requests, calls the host and renders what it answers.
///
/// Thread-safe: handlers run on any shard queue (synchronous ones) or later on the thread that completes them (a
/// post, once reduced and journaled); the host, the stream registry and the authorizer carry their own locks.
public final class SessionService: Sendable {
    let configuration: ServiceConfiguration
    /// The sessions: their store, journal, systems, budget and metrics, and the logic of every route.
    package let host: SessionHost
    let streams: StreamRegistry
    /// The token checks of `--auth jwt`; nil when auth is off.
    let authorizer: Authorizer?

    /// Creates the service with its systems; `environment` gives each new session its clock, upstream and logger.
    public init(
        configuration: ServiceConfiguration,
        systems: [HostedSystem],
        metricsFactory: any MetricsFactory = MetricsSystem.factory,
        persistence: SessionPersistence? = nil,
        environment: @escaping @Sendable (SessionID) -> SystemEnvironment
    ) {
        self.configuration = configuration
        authorizer = configuration.auth.map(Authorizer.init(configuration:))
        streams = StreamRegistry(
            configuration: configuration.streams,
            metrics: StreamMetrics(factory: metricsFactory)
        )
        host = SessionHost(
            limits: configuration.limits,
            systems: systems,
            metricsFactory: metricsFactory,
            persistence: persistence,
            followers: streams,
            fingerprints: { KeyedFingerprints(key: $0) },
            environment: environment
        )
    }

    var persistence: SessionPersistence? { host.persistence }
    var metrics: ServiceMetrics { host.metrics }
    var store: SessionStore { host.store }

    /// Whether the service is shutting down: `/readyz` fails and no new session starts.
    public var isDraining: Bool { host.isDraining }

    /// Marks the service as shutting down, so load balancers stop sending it new work.
    public func beginDraining() {
        host.beginDraining()
    }

    /// The number of live sessions.
    public var sessionCount: Int { store.count }

    /// The bytes all sessions hold, as the budget counts them (`feedbackhost_sessions_bytes`).
    public var sessionBytes: Int { host.budget.bytes }

    /// Adds the service's routes to `router`.
    public func register(in router: inout Router) {
        router.get("/healthz") { _ in Response.json(Array(#"{"status":"ok"}"#.utf8)) }
        router.get("/readyz") { [self] _ in
            if isDraining {
                return Self.problem(
                    APIError(.draining, "the server is shutting down; use another replica", retryAfter: 1)
                )
            }
            if let hold = host.readinessHold.withLock({ $0 }) { return Self.problem(hold) }
            // A journal that cannot commit takes no writes: a balancer should send them to another replica.
            if let refusal = persistence?.writeRefusal() {
                return Self.problem(APIError(.journalUnavailable, refusal.message, retryAfter: refusal.retryAfter))
            }
            return Response.json(Array(#"{"status":"ready"}"#.utf8))
        }
        // Every route below passes the token check of its requirement first and answers with the CORS fields:
        // `register(_:in:)` applies both, to every route alike.
        let maxBody = configuration.maxEventBodyBytes
        register(
            [
                APIRoute(.get, "/v1/systems", nil, .now { [self] _, _ in listSystems() }),
                APIRoute(
                    .get,
                    "/v1/systems/{name}",
                    nil,
                    .now { [self] request, _ throws(APIError) in try describeSystem(request.parameter("name") ?? "") }
                ),
                APIRoute(
                    .post,
                    "/v1/sessions",
                    maxBodySize: maxBody,
                    .creation,
                    .later { [self] request, _, responder in
                        answerOnceDurable(responder) { () throws(APIError) in try withTokens(createSession(request)) }
                    }
                ),
                APIRoute(
                    .get,
                    "/v1/sessions/{id}",
                    .session(.read),
                    .now { [self] (request, _) throws(APIError) in try getSession(request) }
                ),
                APIRoute(
                    .put,
                    "/v1/sessions/{id}",
                    maxBodySize: maxBody,
                    .creation,
                    .later { [self] request, grant, responder in
                        answerOnceDurable(responder) { () throws(APIError) in
                            try withTokens(putSession(request), authorized: grant != nil)
                        }
                    }
                ),
                APIRoute(
                    .delete,
                    "/v1/sessions/{id}",
                    .session(.admin),
                    .now { [self] (request, _) throws(APIError) in try deleteSession(request) }
                ),
                APIRoute(
                    .get,
                    "/v1/sessions/{id}/stream",
                    .session(.read),
                    streamRoute: true,
                    .now { [self] (request, grant) throws(APIError) in
                        try openStream(request, tokenExpiry: grant?.expiry)
                    }
                ),
                APIRoute(
                    .post,
                    "/v1/sessions/{id}/events",
                    maxBodySize: maxBody,
                    .session(.post),
                    .later { [self] request, _, responder in
                        postEvents(request) { [self] result in
                            switch result {
                            case .success(let snapshot):
                                // Made in the call: a local answer was copied into the result, then released.
                                responder.respond(
                                    .success(
                                        Response.json(
                                            snapshot.body(),
                                            field: "ETag",
                                            valueCapacity: Cursor.entityTagCapacity
                                        ) { snapshot.cursor.writeEntityTag(to: $0) }
                                    )
                                )
                            case .failure(let error):
                                metrics.eventsRejected.increment()
                                responder.respond(.failure(error))
                            }
                        }
                    }
                ),
            ] + tokenRoutes + exportRoutes + containmentRoutes + inspectionRoutes + forkRoutes,
            in: &router
        )
    }

    /// Answers the CORS preflights (`OPTIONS`) on `path` from the configured policy: 204 with the allowed method and
    /// headers, or 403 with the reason. `register(_:in:)` adds one for each path of its routes.
    func registerPreflight(_ path: String, in router: inout Router) {
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

    /// Closes every open stream at times spread over the configured drain window (or `limit`, if shorter), so
    /// that clients reconnect to other replicas gradually; returns when all are closed.
    public func drainStreams(within limit: Duration) async {
        await streams.drain(over: min(configuration.streams.drainWindow, limit))
    }

    /// Open session streams.
    public var streamCount: Int { streams.openCount }

    /// Stops every session: effects are cancelled, streams closed.
    public func stopAll() {
        host.stopAll()
    }

    // MARK: - Plumbing

    /// Answers a request that may create a session once everything the session journaled so far (its creation
    /// record among it) is durable: at once without a journal. A failed write is a 503 (507 for a full disk).
    func answerOnceDurable(_ responder: CORSResponder, _ body: () throws(APIError) -> (Response, any HostedSession)) {
        do {
            let (response, session) = try body()
            session.answerOnceJournaled(.success(response), responder.respond)
        } catch {
            responder.respond(.failure(error))
        }
    }

    func withCORS(_ response: consuming Response, _ request: Request) -> Response {
        withCORS(response, origin: request.headers["origin"])
    }

    /// `result` (a problem for a failure) with the CORS fields for a request from `origin`.
    func withCORS(_ result: consuming Result<Response, APIError>, origin: String?) -> Response {
        switch consume result {
        case .success(let response): withCORS(response, origin: origin)
        case .failure(let error): withCORS(Self.problem(error), origin: origin)
        }
    }

    /// `response` with the CORS fields for a request from `origin` (its `Origin` field, if any). Taken, not
    /// borrowed: returned as it is when no field applies (a borrowed one was copied, its body and fields retained,
    /// only for the caller to release its own).
    func withCORS(_ response: consuming Response, origin: String?) -> Response {
        let fields = configuration.cors.responseHeaders(origin: origin)
        guard !fields.isEmpty else { return response }  // no CORS policy: the response as it is, not a copy
        var response = response
        for (name, value) in fields {
            response.headers.add(name: name, value: value)
        }
        return response
    }

    static func problem(_ error: APIError) -> Response {
        error.response
    }
}
