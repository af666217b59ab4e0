import FeedbackJSON
import HTTPServer
import SessionAuth
import SessionJournal
import SessionRuntime
import SessionStreams

/// `--auth jwt`: every route with a requirement is registered through `guarded` (by `register(_:in:)`), which finds
/// the request's token, checks it (from the cache, on the shard queue; else verified in a Task) against what the
/// route needs, and only then runs the handler. Without auth the handlers are registered as they are.
extension SessionService {
    /// Registers `routes`, each the same way: the token check of its requirement (`guarded`), then its answer, with
    /// the CORS fields on every response, the check's refusals included; and the CORS preflight (`OPTIONS`) of each
    /// of their paths, once. The one place all three are applied, so no route can miss one.
    func register(_ routes: [APIRoute], in router: inout Router) {
        var paths: Set<String> = []
        for route in routes {
            router.route(route.method, route.path, maxBodySize: route.maxBodySize, handler: handler(of: route))
            if paths.insert(route.path).inserted { registerPreflight(route.path, in: &router) }
        }
    }

    private func handler(of route: APIRoute) -> Router.Handler {
        switch route.answer {
        case .now(let answer):
            let body: @Sendable (Request, Grant?) -> Response = { [self] request, grant in
                do throws(APIError) {
                    return withCORS(try answer(request, grant), request)
                } catch {
                    return withCORS(Self.problem(error), request)
                }
            }
            guard let requirement = route.requirement else { return .sync { request in body(request, nil) } }
            return guarded(requirement, streamRoute: route.streamRoute, body)
        case .later(let answer):
            let body: @Sendable (Request, Grant?, Responder) -> Void = { [self] request, grant, responder in
                answer(
                    request,
                    grant,
                    CORSResponder(service: self, responder: responder, origin: request.headers["origin"])
                )
            }
            guard let requirement = route.requirement else {
                return .deferred { request, responder in body(request, nil, responder) }
            }
            return guarded(requirement, streamRoute: route.streamRoute, body)
        }
    }

    /// A synchronous handler behind the check of `requirement`.
    private func guarded(
        _ requirement: Authorizer.Requirement,
        streamRoute: Bool = false,
        _ body: @escaping @Sendable (Request, Grant?) -> Response
    ) -> Router.Handler {
        // Without tokens and without a shared journal (whose reads confirm ownership first) nothing waits.
        if authorizer == nil, persistence?.journal.sharesSessions != true {
            return .sync { request in body(request, nil) }
        }
        return guarded(requirement, streamRoute: streamRoute) { request, grant, responder in
            responder.respond(body(request, grant))
        }
    }

    /// A deferred handler behind the check of `requirement`.
    private func guarded(
        _ requirement: Authorizer.Requirement,
        streamRoute: Bool = false,
        _ body: @escaping @Sendable (Request, Grant?, Responder) -> Void
    ) -> Router.Handler {
        // Every request for a session but a post of events first confirms a copy in memory is current (a read from
        // a superseded copy would answer an older revision, a token check would meet its older generation).
        let confirms: Bool
        if case .session(.post) = requirement { confirms = false } else { confirms = true }
        let checked = tokenChecked(requirement, streamRoute: streamRoute, body)
        guard confirms else { return .deferred(checked) }
        return .deferred { [self] request, responder in
            host.confirmingOwnership(of: Self.sessionIDParameter(request)) { [self] problem in
                if let problem { return refuse(problem, request, responder) }
                checked(request, responder)
            }
        }
    }

    /// `body` behind the check of `requirement`, without the look at ownership.
    private func tokenChecked(
        _ requirement: Authorizer.Requirement,
        streamRoute: Bool,
        _ body: @escaping @Sendable (Request, Grant?, Responder) -> Void
    ) -> @Sendable (Request, Responder) -> Void {
        guard let authorizer else { return { request, responder in body(request, nil, responder) } }
        return { [self] request, responder in
            if case .creation = requirement, authorizer.creation == .open, !putOfExistingSession(request) {
                return body(request, nil, responder)
            }
            guard let token = BearerToken.find(in: request, streamRoute: streamRoute) else {
                return refuse(Authorizer.missing(streamRoute: streamRoute), request, responder)
            }
            if let grant = authorizer.verifier.cachedGrant(token) {
                return proceed(grant, requirement, request, responder, body)
            }
            Task { [self] in
                switch await authorizer.verifier.verify(token) {
                case .success(let grant): proceed(grant, requirement, request, responder, body)
                case .failure(let rejection): refuse(Authorizer.rejected(rejection), request, responder)
                }
            }
        }
    }

    private func proceed(
        _ grant: Grant,
        _ requirement: Authorizer.Requirement,
        _ request: Request,
        _ responder: Responder,
        _ body: @Sendable (Request, Grant?, Responder) -> Void
    ) {
        do throws(APIError) {
            try authorize(grant, requirement, request)
        } catch {
            return refuse(error, request, responder)
        }
        body(request, grant, responder)
    }

    private func authorize(
        _ grant: Grant,
        _ requirement: Authorizer.Requirement,
        _ request: Request
    ) throws(APIError) {
        guard let authorizer else { return }
        let id = Self.sessionIDParameter(request)
        switch requirement {
        case .session(let scope):
            // An id that is not one: the handler's 404 says so.
            guard let id else { return }
            // Only a system-wide or a minted token needs the live session: the others are decided by the token.
            guard grant.system != nil || grant.minted != nil else {
                return try authorizer.check(grant, scope: scope, id: id, session: nil)
            }
            // A minted token is checked against the token generation of a copy the journal confirmed is current
            // (`confirmingOwnership`, before the check): one another replica took over (and may have revoked on) was
            // dropped, and `live` reads the session back. Posted events skip the look, which would cost a round trip
            // to PostgreSQL per post: a superseded copy's append is fenced, so nothing of the post is kept, it is
            // answered 503, and its retry meets the current generation.
            try authorizer.check(grant, scope: scope, id: id, session: try live(id))
        case .creation:
            if let id, let session = try live(id) {
                // A PUT repeating a creation answers the session's state: reading it needs read.
                if grant.mayCreate, grant.covers(id, system: session.system) { return }
                return try authorizer.check(grant, scope: .read, id: id, session: session)
            }
            var system: String?
            if case .object(let members)? = try? Self.jsonBody(request), case .string(let name)? = members["system"] {
                system = name
            }
            try authorizer.checkCreation(grant, id: id, system: system)
        case .listing(let scope):
            try authorizer.checkListing(grant, scope: scope)
        }
    }

    /// The session's system, epoch and token generation, activating it when it is passive (its handler would next);
    /// nil when there is none (the handler then answers why). A journal that cannot be read refuses the request.
    private func live(_ id: SessionID) throws(APIError) -> (system: String, epoch: UInt64, tokenGeneration: UInt64)? {
        guard let session = try host.activeSession(id) else { return nil }
        return (session.systemName, session.snapshot().cursor.epoch, session.tokenGeneration)
    }

    private func putOfExistingSession(_ request: Request) -> Bool {
        guard request.method == .put, let id = Self.sessionIDParameter(request) else { return false }
        return (try? live(id)) != nil
    }

    private func refuse(_ error: APIError, _ request: Request, _ responder: Responder) {
        responder.respond(withCORS(Self.problem(error), request))
    }

    /// A new session's answer with its minted tokens (201 only: repeating a PUT gives no tokens), when the server
    /// has a key.
    /// `authorized` is false for an open creation that came without a token: should it have met an existing session
    /// (two PUTs racing), the answer is 401, not that session's state.
    func withTokens(
        _ created: (Response, any HostedSession),
        authorized: Bool = true
    ) -> (Response, any HostedSession) {
        var (response, session) = created
        if authorizer != nil, !authorized, response.status != 201 {
            return (Self.problem(Authorizer.missing(streamRoute: false)), session)
        }
        guard response.status == 201, let authorizer, case .bytes(var body) = response.body,
            body.last == UInt8(ascii: "}"),
            let tokens = authorizer.mintedTokens(
                for: session.id,
                epoch: session.snapshot().cursor.epoch,
                generation: session.tokenGeneration
            )
        else { return created }
        body.removeLast()
        body.append(contentsOf: ",\(tokens)}".utf8)
        response.body = .bytes(body)
        response.headers.add(name: "Cache-Control", value: "no-store")
        return (response, session)
    }

    /// `POST /v1/sessions/{id}/tokens` (admin): fresh tokens of every scope. `DELETE` (admin): revokes every token
    /// the server minted for the session (its token generation moves on, journaled through the session's owner and
    /// durable before the answer), then answers fresh ones. Routes only with auth on.
    var tokenRoutes: [APIRoute] {
        guard let authorizer else { return [] }
        return [HTTPMethod.post, .delete].map { method in
            APIRoute(
                method,
                "/v1/sessions/{id}/tokens",
                maxBodySize: 0,
                .session(.admin),
                .later { [self] request, _, responder in
                    let session: any HostedSession
                    do throws(APIError) {
                        session = try self.session(for: request)
                        guard authorizer.minter != nil else {
                            throw APIError(
                                .sessionNotFound,
                                "this server mints no tokens (it has no auth.key.file); tokens come from your backend"
                            )
                        }
                    } catch {
                        return responder.respond(.failure(error))
                    }
                    guard request.method == .delete else {
                        return responder.respond(.success(tokensResponse(session, authorizer, session.tokenGeneration)))
                    }
                    session.revokeTokens { [self] result in
                        // This copy refuses the old tokens from now on, whatever the journal said: its streams come
                        // back with a token.
                        streams.reauth(session.id)
                        responder.respond(result.map { generation in tokensResponse(session, authorizer, generation) })
                    }
                }
            )
        }
    }

    /// The answer of the token routes: fresh tokens of every scope at `generation`, not cached.
    private func tokensResponse(
        _ session: any HostedSession,
        _ authorizer: Authorizer,
        _ generation: UInt64
    ) -> Response {
        let epoch = session.snapshot().cursor.epoch
        let tokens = authorizer.mintedTokens(for: session.id, epoch: epoch, generation: generation) ?? ""
        var response = Response.json(Array("{\"id\":\"\(session.id)\",\(tokens)}".utf8))
        response.headers.add(name: "Cache-Control", value: "no-store")
        return response
    }
}
