import Foundation
import Glibc
import Logging
import Synchronization
import Testing

@testable import HTTPServer

/// Collects what an `AccessLog` writes, as the writer hands it over.
final class AccessLogCapture: Sendable {
    private let bytes = Mutex<[UInt8]>([])
    /// How many times the log wrote.
    let writes = Atomic<Int>(0)

    var write: @Sendable (UnsafeRawBufferPointer) -> Void {
        { [self] chunk in
            bytes.withLock { $0.append(contentsOf: chunk) }
            writes.add(1, ordering: .relaxed)
        }
    }

    var lines: [String] {
        String(decoding: bytes.withLock { $0 }, as: UTF8.self).split(separator: "\n").map(String.init)
    }
}

@Suite(.timeLimit(.minutes(1))) struct AccessLogTests {
    static let secret = "Qm9yZWFsaXNTZWNyZXQxMj"

    /// A log that writes only when asked: nothing reaches the capture before shutdown unless it flushes.
    static func heldBack(_ format: AccessLog.Format, _ capture: AccessLogCapture) -> AccessLog {
        AccessLog(
            configuration: AccessLog.Configuration(format: format, bufferBytes: 1 << 20, flushInterval: .seconds(3600)),
            write: capture.write
        )
    }

    static func serve(_ log: AccessLog, requests: String, answers: Int) async throws -> [Int] {
        let server = Server(
            configuration: HTTPServerConfiguration(host: "127.0.0.1", port: 0),
            router: testRouter(),
            logger: Logger(label: "test"),
            accessLog: log
        )
        let port = try server.start()
        let statuses = try await offPool {
            let client = try TestClient(port: port)
            client.send(requests)
            return try (0..<answers).map { _ in try client.readResponse().status }
        }
        await server.shutdown(deadline: .seconds(1))
        return statuses
    }

    @Test func linesShowMethodRouteStatusBytesAndDurationAndAreWrittenAtShutdown() async throws {
        let capture = AccessLogCapture()
        let log = Self.heldBack(.text, capture)
        let statuses = try await Self.serve(
            log,
            requests: "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n"
                + "GET /v1/sessions/\(Self.secret)/events/7 HTTP/1.1\r\nHost: x\r\n\r\n"
                + "GET /missing HTTP/1.1\r\nHost: x\r\n\r\n",
            answers: 3
        )
        #expect(statuses == [200, 200, 404])
        // Nothing was flushed by size or timer: the lines are there because the shutdown wrote them.
        #expect(capture.writes.load(ordering: .relaxed) == 1)
        let lines = capture.lines
        try #require(lines.count == 3)
        let fields = lines.map(Self.fields)
        #expect(fields.map { $0["method"] } == ["GET", "GET", "GET"])
        #expect(fields.map { $0["route"] } == ["/healthz", "/v1/sessions/{id}/events/{n}", "/missing"])
        #expect(fields.map { $0["status"] } == ["200", "200", "404"])
        #expect(fields[0]["bytes"] == "15")
        #expect(fields.allSatisfy { Int($0["duration_us"] ?? "") != nil && $0["connection.id"] != nil })
        #expect(lines.allSatisfy { $0.contains(" info http.access: ") && $0.hasSuffix("connection.id=1") })
        #expect(
            lines.allSatisfy {
                $0.range(of: #"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z "#, options: .regularExpression) != nil
            }
        )
        #expect(!lines.contains { $0.contains(Self.secret) })
    }

    @Test func theSessionIDNeverAppearsEvenInPathsNoRouteMatches() async throws {
        let capture = AccessLogCapture()
        let log = Self.heldBack(.json, capture)
        _ = try await Self.serve(
            log,
            requests: "GET /v1/sessions/\(Self.secret)/nothing HTTP/1.1\r\nHost: x\r\n\r\n"
                + "DELETE /v1/sessions/\(Self.secret)/events/1 HTTP/1.1\r\nHost: x\r\n\r\n"
                + "GET /v1/sessions/\(Self.secret)/events/1?token=\(Self.secret) HTTP/1.1\r\nHost: x\r\n\r\n",
            answers: 3
        )
        let lines = capture.lines
        try #require(lines.count == 3)
        #expect(!lines.contains { $0.contains(Self.secret) })
        let objects = try lines.map { try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] ?? [:] }
        #expect(
            objects.map { $0["route"] as? String } == [
                "/v1/sessions/{redacted}/nothing", "/v1/sessions/{id}/events/{n}", "/v1/sessions/{id}/events/{n}",
            ]
        )
        #expect(objects.map { $0["status"] as? Int } == [404, 405, 200])
        #expect(
            objects.map { $0["msg"] as? String } == [
                "GET /v1/sessions/{redacted}/nothing 404", "DELETE /v1/sessions/{id}/events/{n} 405",
                "GET /v1/sessions/{id}/events/{n} 200",
            ]
        )
        #expect(objects.allSatisfy { $0["label"] as? String == "http.access" && $0["level"] as? String == "info" })
        #expect(objects.allSatisfy { $0["bytes"] is Int && $0["duration_us"] is Int && $0["ts"] is String })
    }

    @Test func aFullBufferIsWrittenWithoutWaitingForTheTimer() async throws {
        let capture = AccessLogCapture()
        let log = AccessLog(
            configuration: AccessLog.Configuration(bufferBytes: 0, flushInterval: .seconds(3600)),
            write: capture.write
        )
        var router = Router()
        router.get("/healthz") { _ in Response.text("ok") }
        let entry = AccessLogFormatter.Entry(
            method: .get,
            path: "/healthz",
            status: 200,
            bytes: 2,
            durationMicroseconds: 5,
            connection: 9
        )
        log.record(entry, router: router)
        log.flush()  // waits for the write the full buffer queued; it finds nothing more to write
        #expect(capture.writes.load(ordering: .relaxed) == 1)
        #expect(capture.lines.count == 1)
    }

    @Test func linesBeyondWhatMayWaitAreDroppedAndCountedInsteadOfBlocking() {
        let capture = AccessLogCapture()
        let log = AccessLog(
            configuration: AccessLog.Configuration(
                bufferBytes: 1 << 20,
                flushInterval: .seconds(3600),
                maxPendingBytes: 300
            ),
            write: capture.write
        )
        let router = Router()
        for connection in 1...10 {
            let entry = AccessLogFormatter.Entry(
                method: .get,
                path: "/healthz",
                status: 200,
                bytes: 2,
                durationMicroseconds: 5,
                connection: UInt64(connection)
            )
            log.record(entry, router: router)
        }
        log.flush()
        let kept = capture.lines.count
        #expect(kept >= 2 && kept < 10)
        #expect(log.droppedLines == 10 - kept)
    }

    @Test func routesShowTheirPatternLiteralRoutesStayWholeAndOtherLongSegmentsAreRedacted() {
        var router = Router()
        router.get("/v1/sessions/{id}") { _ in Response.text("") }
        router.get("/v1/an-unusually-long-literal-segment") { _ in Response.text("") }
        func shown(_ path: String) -> String {
            var out: [UInt8] = []
            router.appendRoute(of: path, to: &out)
            return String(decoding: out, as: UTF8.self)
        }
        #expect(shown("/v1/sessions/\(Self.secret)") == "/v1/sessions/{id}")
        #expect(shown("/v1/an-unusually-long-literal-segment") == "/v1/an-unusually-long-literal-segment")
        #expect(shown("/v1/an-unusually-long-literal-segment/x") == "/v1/{redacted}/x")
        #expect(shown("/v2/sessions/\(Self.secret)/") == "/v2/sessions/{redacted}/")
        #expect(shown("/a\"b\\c") == "/a%22b%5Cc")
        #expect(shown("") == "/")
    }

    @Test func timeStampsAreUTCWithMilliseconds() {
        var formatter = AccessLogFormatter(format: .text, level: "info")
        var out: [UInt8] = []
        formatter.appendTime(timespec(tv_sec: 1_764_138_197, tv_nsec: 123_456_789), to: &out)
        out.append(UInt8(ascii: " "))
        formatter.appendTime(timespec(tv_sec: 1_764_138_197, tv_nsec: 5_000_000), to: &out)
        out.append(UInt8(ascii: " "))
        formatter.appendTime(timespec(tv_sec: 951_782_400, tv_nsec: 0), to: &out)
        #expect(
            String(decoding: out, as: UTF8.self)
                == "2025-11-26T06:23:17.123Z 2025-11-26T06:23:17.005Z 2000-02-29T00:00:00.000Z"
        )
    }

    /// A line for a request a route took is written on the stack in one piece; it is the line the general way
    /// writes (the route looked up from the path), byte for byte, whatever the numbers, the method and the time.
    @Test func aRoutedRequestsLineIsTheOneTheGeneralWayWrites() throws {
        var router = Router()
        router.get("/healthz") { _ in Response.text("") }
        router.route(.post, "/v1/sessions/{id}/events") { _ in Response.text("") }
        router.route(.delete, "/v1/sessions/{id}") { _ in Response.text("") }
        let requests: [(HTTPMethod, String)] = [
            (.get, "/healthz"), (.post, "/v1/sessions/\(Self.secret)/events"), (.delete, "/v1/sessions/\(Self.secret)"),
        ]
        let times = [
            timespec(tv_sec: 1_764_138_197, tv_nsec: 0), timespec(tv_sec: 1_764_138_197, tv_nsec: 999_999_999),
            timespec(tv_sec: 1_764_138_198, tv_nsec: 45_000_000), timespec(tv_sec: 951_782_400, tv_nsec: 7_000_000),
        ]
        let numbers: [UInt64] = [0, 9, 10, 99, 100, 4_096, 999_999, 1_000_000, UInt64(Int.max), UInt64.max]
        var routed = AccessLogFormatter(format: .text, level: "info")
        var looked = AccessLogFormatter(format: .text, level: "info")
        var cases = 0
        for (method, path) in requests {
            guard case .found(let route, _) = router.match(method, path) else {
                Issue.record("no route for \(path)")
                continue
            }
            for (index, time) in times.enumerated() {
                for number in numbers {
                    let status = [200, 204, 404, 503][index]
                    let bytes: Int? = number % 2 == 0 ? Int(clamping: number) : nil
                    let entry = AccessLogFormatter.Entry(
                        method: method,
                        path: path,
                        status: status,
                        bytes: bytes,
                        durationMicroseconds: number,
                        connection: UInt64.max - number
                    )
                    var withRoute = entry
                    withRoute.path = nil
                    withRoute.route = route
                    var fast: [UInt8] = []
                    var general: [UInt8] = []
                    routed.append(withRoute, at: time, router: router, to: &fast)
                    looked.append(entry, at: time, router: router, to: &general)
                    #expect(String(decoding: fast, as: UTF8.self) == String(decoding: general, as: UTF8.self))
                    cases += 1
                }
            }
        }
        #expect(cases == requests.count * times.count * numbers.count)
    }

    static func fields(_ line: String) -> [String: String] {
        var fields: [String: String] = [:]
        for part in line.split(separator: " ") {
            guard let equals = part.firstIndex(of: "=") else { continue }
            fields[String(part[..<equals])] = String(part[part.index(after: equals)...])
        }
        return fields
    }
}
