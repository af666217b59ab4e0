// The peer for the HTTPServer benchmark: the same two endpoints as HTTPServerBench, on Hummingbird 2.
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
var logger = Logger(label: "HummingbirdPeer")
logger.logLevel = .warning
let app = Application(
    router: router,
    configuration: .init(address: .hostname("127.0.0.1", port: port)),
    logger: logger
)
try await app.runService()
