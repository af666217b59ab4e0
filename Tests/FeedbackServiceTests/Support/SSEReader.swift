import Dispatch
import Foundation

/// One item of an event stream as a WHATWG-conforming client sees it.
enum SSEItem: Equatable {
    /// A dispatched event: its type (`message` when none), data (lines joined by LF) and the last event id.
    case event(type: String, data: String, lastEventID: String)
    /// A comment line's text (after the colon and one optional space).
    case comment(String)
    /// A `retry:` field with its value.
    case retry(Int)
    /// The server ended the response or closed the connection.
    case closed
}

/// A raw-socket client of a `text/event-stream` response: connects to 127.0.0.1, sends a GET, reads the head and
/// the (chunked or close-delimited) body, and parses it per the WHATWG "Interpreting an event stream" rules.
///
/// It reads only when asked (`next`), so a test can play a client that stops reading. All blocking socket calls
/// run on the reader's own serial queue, never on the cooperative pool; every wait is bounded.
final class SSEReader: @unchecked Sendable {
    struct Timeout: Error, CustomStringConvertible {
        let what: String
        var description: String { "timed out waiting for \(what)" }
    }

    private let queue = DispatchQueue(label: "test.sse-reader")
    private let fd: Int32
    // Owned by `queue`.
    private var raw: [UInt8] = []
    private var headParsed = false
    private var chunked = false
    private var chunkRemaining = 0
    private var bodyEnded = false
    private var eof = false
    private var body: [UInt8] = []
    private var scanned = 0
    private var items: [SSEItem] = []
    private var dataBuffer = ""
    private var eventType = ""
    private var lastEventID = ""
    private(set) var status = 0
    private(set) var headers: [String: String] = [:]

    /// Connects and sends the request; `receiveBuffer` shrinks the socket's receive buffer (a slow client).
    init(port: Int, path: String, headers extra: [String] = [], receiveBuffer: Int? = nil) throws {
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw Timeout(what: "a socket") }
        if var size = receiveBuffer.map(Int32.init) {
            _ = setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
        }
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
            close(fd)
            throw Timeout(what: "a connection to port \(port)")
        }
        let request =
            (["GET \(path) HTTP/1.1", "Host: 127.0.0.1:\(port)", "Accept: text/event-stream"] + extra)
            .joined(separator: "\r\n") + "\r\n\r\n"
        let bytes = Array(request.utf8)
        _ = bytes.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
    }

    private var isClosed = false

    deinit { if !isClosed { close(fd) } }

    /// Closes the connection, as a client that goes away.
    func disconnect() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            queue.async { [self] in
                if !isClosed {
                    isClosed = true
                    close(fd)
                }
                continuation.resume()
            }
        }
    }

    /// The next item, waiting at most `timeout`.
    func next(timeout: Duration = .seconds(10)) async throws -> SSEItem {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<SSEItem, any Error>) in
            queue.async { [self] in
                continuation.resume(with: Result { try pull(until: .now + timeout) })
            }
        }
    }

    /// The next event (skipping comments and `retry`), waiting at most `timeout`.
    func nextEvent(timeout: Duration = .seconds(10)) async throws -> (type: String, data: String, id: String) {
        let deadline = ContinuousClock.now + timeout
        while true {
            switch try await next(timeout: deadline - .now) {
            case .event(let type, let data, let id): return (type, data, id)
            case .closed: throw Timeout(what: "an event (the stream closed)")
            case .comment, .retry: continue
            }
        }
    }

    /// The status line and headers, once they arrived.
    func head(timeout: Duration = .seconds(10)) async throws -> (status: Int, headers: [String: String]) {
        try await withCheckedThrowingContinuation {
            (continuation: CheckedContinuation<(Int, [String: String]), any Error>) in
            queue.async { [self] in
                continuation.resume(
                    with: Result {
                        let deadline = ContinuousClock.now + timeout
                        while !headParsed {
                            guard try receive(until: deadline) else { throw Timeout(what: "the response head") }
                        }
                        return (status, headers)
                    }
                )
            }
        }
    }

    private func pull(until deadline: ContinuousClock.Instant) throws -> SSEItem {
        while items.isEmpty {
            if bodyEnded || eof { return .closed }
            guard try receive(until: deadline) else { throw Timeout(what: "an SSE item") }
        }
        return items.removeFirst()
    }

    /// Reads once (bounded by `deadline`) and parses what came; false on timeout.
    private func receive(until deadline: ContinuousClock.Instant) throws -> Bool {
        let left = deadline - .now
        guard left > .zero else { return false }
        var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        let millis = Int32(
            min(left.components.seconds * 1000 + left.components.attoseconds / 1_000_000_000_000_000 + 1, 60_000)
        )
        guard poll(&poller, 1, millis) > 0 else { return false }
        var buffer = [UInt8](repeating: 0, count: 65_536)
        let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
        if n <= 0 {
            eof = true
            finishParsing()
            return true
        }
        raw.append(contentsOf: buffer[0..<n])
        parseTransport()
        return true
    }

    private func parseTransport() {
        if !headParsed {
            guard let end = find([13, 10, 13, 10], in: raw) else { return }
            let lines = String(decoding: raw[0..<end], as: UTF8.self).components(separatedBy: "\r\n")
            status = Int(lines.first?.split(separator: " ").dropFirst().first ?? "") ?? 0
            for line in lines.dropFirst() {
                guard let colon = line.firstIndex(of: ":") else { continue }
                headers[line[..<colon].lowercased()] = line[line.index(after: colon)...]
                    .trimmingCharacters(in: .whitespaces)
            }
            headParsed = true
            chunked = headers["transfer-encoding"]?.lowercased() == "chunked"
            raw.removeFirst(end + 4)
        }
        if !chunked {
            body.append(contentsOf: raw)
            raw.removeAll()
        } else {
            while !bodyEnded {
                if chunkRemaining > 0 {
                    let take = min(chunkRemaining, raw.count)
                    guard take > 0 else { break }
                    body.append(contentsOf: raw[0..<take])
                    raw.removeFirst(take)
                    chunkRemaining -= take
                    if chunkRemaining == 0 { chunkRemaining = -2 }  // the CRLF after the data
                    continue
                }
                if chunkRemaining == -2 {
                    guard raw.count >= 2 else { break }
                    raw.removeFirst(2)
                    chunkRemaining = 0
                    continue
                }
                guard let end = find([13, 10], in: raw) else { break }
                let sizeText = String(decoding: raw[0..<end], as: UTF8.self).split(separator: ";").first ?? ""
                raw.removeFirst(end + 2)
                let size = Int(sizeText, radix: 16) ?? 0
                if size == 0 {
                    bodyEnded = true
                } else {
                    chunkRemaining = size
                }
            }
        }
        parseEvents(final: false)
        if bodyEnded { finishParsing() }
    }

    private func finishParsing() {
        parseEvents(final: true)
    }

    /// WHATWG: lines end at CRLF, LF or CR; a blank line dispatches; a partial line waits for more (a CR at the
    /// very end waits too, since an LF may follow).
    private func parseEvents(final: Bool) {
        var start = 0
        var index = scanned
        while index < body.count {
            let byte = body[index]
            if byte == 10 || byte == 13 {
                if byte == 13, index + 1 == body.count, !final { break }
                processLine(String(decoding: body[start..<index], as: UTF8.self))
                if byte == 13, index + 1 < body.count, body[index + 1] == 10 { index += 1 }
                start = index + 1
            }
            index += 1
        }
        body.removeFirst(start)
        // A long partial line is not scanned again when more of it arrives.
        scanned = index - start
    }

    private func processLine(_ line: String) {
        if line.isEmpty {
            if !dataBuffer.isEmpty {
                if dataBuffer.hasSuffix("\n") { dataBuffer.removeLast() }
                items.append(
                    .event(type: eventType.isEmpty ? "message" : eventType, data: dataBuffer, lastEventID: lastEventID)
                )
            }
            dataBuffer = ""
            eventType = ""
            return
        }
        if line.hasPrefix(":") {
            var text = line.dropFirst()
            if text.hasPrefix(" ") { text = text.dropFirst() }
            items.append(.comment(String(text)))
            return
        }
        var name = Substring(line)
        var value: Substring = ""
        if let colon = line.firstIndex(of: ":") {
            name = line[..<colon]
            value = line[line.index(after: colon)...]
            if value.hasPrefix(" ") { value = value.dropFirst() }
        }
        switch name {
        case "event": eventType = String(value)
        case "data": dataBuffer += value + "\n"
        case "id": if !value.contains("\u{0}") { lastEventID = String(value) }
        case "retry":
            if !value.isEmpty, value.allSatisfy({ $0.isASCII && $0.isNumber }), let retry = Int(value) {
                items.append(.retry(retry))
            }
        default: break
        }
    }

    private func find(_ needle: [UInt8], in haystack: [UInt8]) -> Int? {
        guard haystack.count >= needle.count else { return nil }
        for start in 0...(haystack.count - needle.count) where haystack[start] == needle[0] {
            if Array(haystack[start..<start + needle.count]) == needle { return start }
        }
        return nil
    }
}
