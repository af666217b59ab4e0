// The Hummingbird 2 peer. For the HTTPServer benchmark: the same two endpoints as HTTPServerBench. For the events
// and fan-out benchmarks: the sessions API of FeedbackHost for the counter system (PeerRoutes), including the SSE
// stream, on the same FeedbackLoop engine and CounterSystem reducer.
// Usage: HummingbirdPeer [port]   (default 8081)
import Hummingbird
import Logging

let port = CommandLine.arguments.count > 1 ? Int(CommandLine.arguments[1]) ?? 8081 : 8081
let router = Router()
router.get("/healthz") { _, _ in
    Response(
        status: .ok,
        headers: [.contentType: "application/json"],
        body: .init(byteBuffer: ByteBuffer(string: #"{"status":"ok"}"#))
    )
}
router.post("/v1/events") { request, _ in
    let body = try await request.body.collect(upTo: 64 * 1024)
    return Response(
        status: .accepted,
        headers: [.contentType: "application/json"],
        body: .init(byteBuffer: ByteBuffer(string: #"{"accepted":true,"bytes":\#(body.readableBytes)}"#))
    )
}
PeerRoutes.add(to: router, sessions: PeerSessions())
var logger = Logger(label: "HummingbirdPeer")
logger.logLevel = .warning
let app = Application(
    router: router,
    configuration: .init(address: .hostname("127.0.0.1", port: port)),
    logger: logger
)
try await app.runService()
