import Foundation
import Hummingbird
import Systems

/// The sessions API on Hummingbird for the counter system, shaped like FeedbackHost's: create, snapshot, post one
/// event, and the SSE stream in snapshot mode. JSON goes through Foundation's JSONDecoder/JSONEncoder as in
/// FeedbackHost. Errors are short problem documents; only the success paths are benchmarked.
enum PeerRoutes {
    static let maxBody = 64 * 1024

    static func add(to router: Router<BasicRequestContext>, sessions: PeerSessions) {
        router.post("/v1/sessions") { request, _ in
            let body = try await request.body.collect(upTo: maxBody)
            struct Create: Decodable { var system: String }
            guard let create = try? JSONDecoder().decode(Create.self, from: Data(body.readableBytesView)),
                create.system == "counter"
            else {
                return problem(.unprocessableContent, "only {\"system\":\"counter\"} is served here")
            }
            let (id, session) = sessions.create()
            let step = session.loop.currentStep
            return json(
                .created,
                #"{"id":"\#(id)","system":"counter",\#(session.snapshotBody(step).dropFirst())"#,
                extra: [.location: "/v1/sessions/\(id)", .eTag: "\"\(session.epoch)-\(step.revision)\""]
            )
        }
        router.get("/v1/sessions/:id") { _, context in
            guard let id = context.parameters.get("id"), let session = sessions.session(id) else {
                return problem(.notFound, "no such session")
            }
            let step = session.loop.currentStep
            return json(
                .ok,
                #"{"id":"\#(id)","system":"counter",\#(session.snapshotBody(step).dropFirst())"#,
                extra: [.eTag: "\"\(session.epoch)-\(step.revision)\""]
            )
        }
        router.post("/v1/sessions/:id/events") { request, context in
            guard let id = context.parameters.get("id"), let session = sessions.session(id) else {
                return problem(.notFound, "no such session")
            }
            let body = try await request.body.collect(upTo: maxBody)
            let event: CounterSystem.Event
            do {
                event = try JSONDecoder().decode(CounterSystem.Event.self, from: Data(body.readableBytesView))
            } catch {
                return problem(.badRequest, "not a counter event")
            }
            guard let step = await session.loop.send(contentsOf: CollectionOfOne(event)) else {
                return problem(.notFound, "session ended")
            }
            return json(.ok, session.snapshotBody(step), extra: [.eTag: "\"\(session.epoch)-\(step.revision)\""])
        }
        router.get("/v1/sessions/:id/stream") { _, context in
            guard let id = context.parameters.get("id"), let session = sessions.session(id) else {
                return problem(.notFound, "no such session")
            }
            return Response(
                status: .ok,
                headers: [.contentType: "text/event-stream", .cacheControl: "no-store"],
                body: ResponseBody(asyncSequence: session.subscribe())
            )
        }
    }

    private static func json(_ status: HTTPResponse.Status, _ body: String, extra: HTTPFields = [:]) -> Response {
        var headers: HTTPFields = [.contentType: "application/json"]
        headers.append(contentsOf: extra)
        return Response(status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(string: body)))
    }

    private static func problem(_ status: HTTPResponse.Status, _ detail: String) -> Response {
        Response(
            status: status,
            headers: [.contentType: "application/problem+json"],
            body: .init(byteBuffer: ByteBuffer(string: #"{"status":\#(status.code),"detail":"\#(detail)"}"#))
        )
    }
}
