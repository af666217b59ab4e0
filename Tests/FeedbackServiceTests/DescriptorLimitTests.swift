import Foundation
import Testing

/// `feedback-host` under a descriptor limit far below `max.connections` (run through `prlimit`): the cap is lowered
/// to fit, and once descriptors run out every further connection is answered 503 and closed (through the spare
/// descriptor) instead of the accept loop spinning; `/healthz` answers throughout and is 200 again once the
/// connections close.
@Suite(.serialized, .timeLimit(.minutes(2))) struct DescriptorLimitTests {
    /// More connections than the limit allows, each asking `/healthz` on a keep-alive connection.
    private static let connections = 64

    @Test func outOfDescriptorsEveryConnectionIsAnsweredAndHealthzStillAnswers() async throws {
        let log = FileManager.default.temporaryDirectory.appendingPathComponent("fh-nofile-\(UUID()).log")
        defer { try? FileManager.default.removeItem(at: log) }
        // No reserve, so the lowered cap (48) is above what is left once the process's own descriptors are open:
        // accept itself runs out (EMFILE), which is the path under test.
        let server = try await offPool {
            try RunningServer(
                arguments: ["--data-dir", "none", "--log-level", "warning", "--http-fd-reserve", "0"],
                errorLog: log,
                launcher: ["/usr/bin/prlimit", "--nofile=48:48", "--"]
            )
        }
        defer { server.stop() }
        let port = server.port

        let (held, refused, refusedClosed, healthzWhileFull) = try await offPool {
            var held: [RawClient] = []
            var refused = 0
            var refusedClosed = 0
            for _ in 0..<Self.connections {
                let client = try RawClient(port: port)
                client.send("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
                let answer = client.readAnswer()
                if answer.hasPrefix("HTTP/1.1 200") {
                    held.append(client)
                } else if answer.hasPrefix("HTTP/1.1 503") {
                    refused += 1
                    if client.waitForClose() { refusedClosed += 1 }
                }
            }
            let healthz = try curl(["http://127.0.0.1:\(port)/healthz"]).status
            return (held, refused, refusedClosed, healthz)
        }
        // Every connection was answered: served while descriptors lasted, then refused with 503 and closed.
        #expect(held.count > 0)
        #expect(refused > 0)
        #expect(held.count + refused == Self.connections)
        #expect(refusedClosed == refused)
        #expect(healthzWhileFull == 503)

        for client in held { client.close() }
        let healthz = try await offPool { () -> Int in
            // The server notices the closes asynchronously: ask until it answers 200 (bounded).
            for _ in 0..<100 {
                let status = try curl(["http://127.0.0.1:\(port)/healthz"]).status
                if status == 200 { return status }
                usleep(20_000)
            }
            return 0
        }
        #expect(healthz == 200)

        let metrics = try await offPool { try curl(["http://127.0.0.1:\(port)/metrics"]).body }
        let emfile = metrics.split(separator: "\n").first {
            $0.hasPrefix(#"http_server_accept_errors_total{errno="EMFILE"}"#)
        }
        let count = emfile.flatMap { $0.split(separator: " ").last }.flatMap { Int($0) } ?? 0
        #expect(count >= refused)
        #expect(server.stop() == 0)
        let errors = (try? String(contentsOf: log, encoding: .utf8)) ?? ""
        #expect(errors.contains("max.connections lowered to fit the descriptor limit"))
        #expect(errors.contains("out of file descriptors"))
    }
}

/// A blocking loopback socket with a 5 s receive timeout, for raw HTTP exchanges.
private final class RawClient: @unchecked Sendable {
    private let fd: Int32

    init(port: Int) throws {
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard connected == 0 else {
            Glibc.close(fd)
            throw RunningServer.ServerFailure(message: "connect failed: errno \(errno)")
        }
        var timeout = timeval(tv_sec: 5, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    }

    deinit { Glibc.close(fd) }

    func close() { shutdown(fd, Int32(SHUT_RDWR)) }

    func send(_ text: String) {
        let bytes = Array(text.utf8)
        _ = bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
    }

    /// The first bytes of an answer (enough for its status line), or "" on EOF, reset or timeout.
    func readAnswer() -> String {
        var buffer = [UInt8](repeating: 0, count: 4096)
        let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
        return n > 0 ? String(decoding: buffer[0..<n], as: UTF8.self) : ""
    }

    /// Whether the server closed the connection (EOF or reset) within the receive timeout.
    func waitForClose() -> Bool {
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n > 0 { continue }
            return n == 0 || errno == ECONNRESET
        }
    }
}
