import HTTPServer
import SessionJournal
import SessionRuntime
import SessionStreams

extension SessionService {
    /// `GET /v1/sessions/{id}/stream`: 200 at once with a comment and `retry:`, then the session's states as
    /// server-sent events. Past a stream limit or while draining: the same 200 start, then a close, so a browser
    /// reconnects on its own after `retry`.
    /// With a token, the stream gets `event: reauth` and closes at `tokenExpiry` (seconds since 1970).
    func openStream(_ request: Request, tokenExpiry: Double? = nil) throws(APIError) -> Response {
        let session = try session(for: request)
        var parsed = try StreamRequest(request)
        parsed.tokenExpiry = tokenExpiry
        let options = parsed
        let registry = streams
        let hub = registry.hub(for: session)
        if store[session.id] !== session {
            // Deleted while the hub was being made (the delete may have missed it), or, with a shared journal, dropped
            // since another replica took it: then the stream resumes there.
            registry.end(session.id, reason: persistence?.journal.sharesSessions == true ? .moved : .deleted)
        }
        return Response(status: 200, headers: Self.eventStreamHeaders) { [self] stream in
            let prelude = StreamFrame.prelude(
                comment: "feedbackhost stream of session \(session.id)",
                retryMilliseconds: registry.configuration.retryWithJitter()
            )
            stream.write(prelude)
            if let refusal = isDraining ? .draining : hub.admit() {
                stream.finish()
                registry.metrics.closed(refusal)
                return
            }
            registry.metrics.sent(events: 0, bytes: prelude.count)
            hub.subscribe(stream, request: options)
        }
    }

    static let eventStreamHeaders = HTTPHeaders([
        ("Content-Type", "text/event-stream"),
        ("Cache-Control", "no-store"),
        ("X-Accel-Buffering", "no"),
    ])
}
