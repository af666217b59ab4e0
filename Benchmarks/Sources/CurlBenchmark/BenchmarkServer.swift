import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A minimal keep-alive HTTP/1.1 server for the benchmark: a thread per connection, one canned JSON page.
///
/// Good enough not to be the bottleneck (requests are counted by their header end; GETs carry no body).
/// Prints its port, serves until its stdin closes.
enum BenchmarkServer {
    static let body = Array(
        #"{"page":1,"items":[{"id":1,"name":"alpha"},{"id":2,"name":"beta"},{"id":3,"name":"gamma"}],"next":null}"#.utf8
    )
    static let response: [UInt8] =
        Array(
            "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: \(body.count)\r\n\r\n".utf8
        ) + body

    static func run() {
        signal(SIGPIPE, SIG_IGN)
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var yes: Int32 = 1
        setsockopt(listener, SOL_SOCKET, SO_REUSEADDR, &yes, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                precondition(bind(listener, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0)
            }
        }
        precondition(listen(listener, 1024) == 0)
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { _ = getsockname(listener, $0, &length) }
        }
        FileHandle.standardOutput.write(Data("\(UInt16(bigEndian: address.sin_port))\n".utf8))
        Thread.detachNewThread {
            // The orchestrator holds our stdin; EOF means it is gone.
            while true {
                var byte: UInt8 = 0
                if read(0, &byte, 1) <= 0 { exit(0) }
            }
        }
        loop(listener: listener)
    }

    private static func loop(listener: Int32) {
        // Blocking accept on the listener; one thread per connection (64 here), in its own process.
        let flags = fcntl(listener, F_GETFL)
        _ = fcntl(listener, F_SETFL, flags & ~O_NONBLOCK)
        while true {
            let client = accept(listener, nil, nil)
            if client < 0 { continue }
            var one: Int32 = 1
            setsockopt(client, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
            Thread.detachNewThread { serve(client) }
        }
    }

    private static func serve(_ fd: Int32) {
        var buffer = [UInt8](repeating: 0, count: 16_384)
        var out: [UInt8] = []
        // Counts "\r\n\r\n" across reads: `matched` is how many of its bytes matched so far.
        var matched = 0
        while true {
            let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if count <= 0 { break }
            var requests = 0
            for byte in buffer[0..<count] {
                let expected: UInt8 = matched % 2 == 0 ? 13 : 10
                if byte == expected {
                    matched += 1
                    if matched == 4 {
                        requests += 1
                        matched = 0
                    }
                } else {
                    matched = byte == 13 ? 1 : 0
                }
            }
            guard requests > 0 else { continue }
            out.removeAll(keepingCapacity: true)
            for _ in 0..<requests { out += response }
            var sent = 0
            while sent < out.count {
                let written = out.withUnsafeBytes {
                    send(fd, $0.baseAddress! + sent, $0.count - sent, Int32(MSG_NOSIGNAL))
                }
                if written <= 0 { break }
                sent += written
            }
        }
        close(fd)
    }
}
