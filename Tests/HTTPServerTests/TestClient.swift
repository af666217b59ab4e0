import Glibc

/// A blocking loopback client for integration tests: raw bytes out, raw bytes in, every read bounded by a
/// receive timeout so a test waits for an outcome with a bound instead of sleeping.
/// Used by one thread at a time (the test, or the Dispatch thread it hands the client to).
final class TestClient: @unchecked Sendable {
    let fd: Int32
    private var buffer: [UInt8] = []

    struct Response {
        var status: Int
        var headers: [(String, String)]
        var body: [UInt8]
        func header(_ name: String) -> String? {
            headers.first { $0.0.lowercased() == name.lowercased() }?.1
        }
        var text: String { String(decoding: body, as: UTF8.self) }
    }

    init(port: Int, timeoutSeconds: Int = 5) throws {
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard result == 0 else {
            close(fd)
            throw TestClientError(message: "connect failed: \(errno)")
        }
        var timeout = timeval(tv_sec: timeoutSeconds, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var one: Int32 = 1
        setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
    }

    deinit { close(fd) }

    func send(_ text: String) { send(Array(text.utf8)) }

    func send(_ bytes: [UInt8]) {
        var offset = 0
        while offset < bytes.count {
            let n = bytes.withUnsafeBytes { p in
                Glibc.send(fd, p.baseAddress! + offset, p.count - offset, Int32(MSG_NOSIGNAL))
            }
            if n <= 0 { return }
            offset += n
        }
    }

    /// Sends `text` in pieces of `size` bytes, each its own write.
    func sendInPieces(_ text: String, size: Int) {
        let bytes = Array(text.utf8)
        var i = 0
        while i < bytes.count {
            send(Array(bytes[i..<min(i + size, bytes.count)]))
            i += size
        }
    }

    func shutdownWrite() { shutdown(fd, Int32(SHUT_WR)) }

    /// Reads more bytes; false on EOF, error or timeout.
    private func fill() -> Bool {
        var chunk = [UInt8](repeating: 0, count: 65536)
        let n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
        guard n > 0 else { return false }
        buffer.append(contentsOf: chunk[0..<n])
        return true
    }

    func readLine() throws -> String {
        while true {
            if let i = buffer.firstIndex(of: UInt8(ascii: "\n")), i > 0, buffer[i - 1] == UInt8(ascii: "\r") {
                let line = String(decoding: buffer[0..<(i - 1)], as: UTF8.self)
                buffer.removeFirst(i + 1)
                return line
            }
            guard fill() else { throw TestClientError(message: "connection ended while reading a line") }
        }
    }

    private func readExactly(_ count: Int) throws -> [UInt8] {
        while buffer.count < count {
            guard fill() else { throw TestClientError(message: "connection ended while reading a body") }
        }
        defer { buffer.removeFirst(count) }
        return Array(buffer[0..<count])
    }

    /// Reads one response head and body (Content-Length, chunked, or none for HEAD/1xx/204/304 when `bodyless`).
    /// Sends `request` and reads its answer.
    func exchange(_ request: String, bodyless: Bool = false) throws -> Response {
        send(request)
        return try readResponse(bodyless: bodyless)
    }

    func readResponse(bodyless: Bool = false) throws -> Response {
        let statusLine = try readLine()
        let parts = statusLine.split(separator: " ", maxSplits: 2)
        guard parts.count >= 2, let status = Int(parts[1]) else {
            throw TestClientError(message: "bad status line: \(statusLine)")
        }
        var headers: [(String, String)] = []
        while true {
            let line = try readLine()
            if line.isEmpty { break }
            let pair = line.split(separator: ":", maxSplits: 1)
            headers.append((String(pair[0]), pair.count > 1 ? String(pair[1].drop { $0 == " " }) : ""))
        }
        var response = Response(status: status, headers: headers, body: [])
        if bodyless || status < 200 || status == 204 || status == 304 { return response }
        if let length = response.header("Content-Length").flatMap({ Int($0) }) {
            response.body = try readExactly(length)
        } else if response.header("Transfer-Encoding") == "chunked" {
            while true {
                let size = Int(try readLine(), radix: 16) ?? 0
                if size == 0 {
                    _ = try readLine()
                    break
                }
                response.body += try readExactly(size)
                _ = try readLine()
            }
        } else {
            response.body = readToEnd()
        }
        return response
    }

    /// Reads one chunk of a chunked body (size line, data, CRLF); nil at the last chunk.
    func readChunk() throws -> [UInt8]? {
        let size = Int(try readLine(), radix: 16) ?? 0
        if size == 0 {
            _ = try readLine()
            return nil
        }
        defer { _ = try? readLine() }
        return try readExactly(size)
    }

    /// Reads until the server closes (or the receive timeout passes).
    func readToEnd() -> [UInt8] {
        while fill() {}
        defer { buffer.removeAll() }
        return buffer
    }

    /// Whether the server closed the connection (EOF) within the receive timeout, ignoring data before it.
    func waitForClose() -> Bool {
        while true {
            var chunk = [UInt8](repeating: 0, count: 4096)
            let n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n > 0 { continue }
            if n == 0 { return true }
            return errno == ECONNRESET
        }
    }
}

struct TestClientError: Error {
    var message: String
}
