// FeedbackHost's HTTPServer with the benchmark's two endpoints (the same as HummingbirdPeer's).
// Usage: HTTPServerBench [port]   (default 8080)
import Glibc
import HTTPServer
import Logging

let port = CommandLine.arguments.count > 1 ? Int(CommandLine.arguments[1]) ?? 8080 : 8080
let healthz: [UInt8] = Array(#"{"status":"ok"}"#.utf8)
var router = Router()
router.get("/healthz") { _ in Response.json(healthz) }
router.post("/v1/events", maxBodySize: 64 * 1024) { request in
    Response.json(Array(#"{"accepted":true,"bytes":\#(request.body.count)}"#.utf8), status: 202)
}
var logger = Logger(label: "HTTPServerBench")
logger.logLevel = .warning
let server = Server(
    configuration: HTTPServerConfiguration(host: "127.0.0.1", port: port),
    router: router,
    logger: logger
)
let bound = try server.start()
print("listening on \(bound)")
while true { pause() }
