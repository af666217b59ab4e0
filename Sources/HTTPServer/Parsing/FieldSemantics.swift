/// What the framing-relevant header fields of one request say, collected field by field and judged at the end.
///
/// A value used inside `RequestParser.validate`; pure.
struct FieldSemantics {
    var contentLength: Int?
    var transferEncodingSeen = false
    var chunked = false
    var connectionClose = false
    var connectionKeepAlive = false
    var expectsContinue = false
    var hostCount = 0

    mutating func note(
        _ buffer: UnsafeBufferPointer<UInt8>,
        name: Range<Int>,
        value: Range<Int>
    ) throws(HTTPServerError) {
        let n = UnsafeBufferPointer(rebasing: buffer[name])
        let v = UnsafeBufferPointer(rebasing: buffer[value])
        switch n.count {
        case 4 where ASCII.equalsIgnoringCase(n, "host"):
            hostCount += 1
            guard Self.isHost(v) else {
                throw HTTPServerError(.badRequest, "The Host header is not one host with an optional port.")
            }
        case 6 where ASCII.equalsIgnoringCase(n, "expect"):
            guard ASCII.equalsIgnoringCase(v, "100-continue") else {
                throw HTTPServerError(.expectationFailed, "Only `Expect: 100-continue` is supported.")
            }
            expectsContinue = true
        case 10 where ASCII.equalsIgnoringCase(n, "connection"):
            try noteConnection(v)
        case 14 where ASCII.equalsIgnoringCase(n, "content-length"):
            guard contentLength == nil else {
                throw HTTPServerError(.badRequest, "More than one Content-Length.")
            }
            contentLength = try Self.parseLength(v)
        case 17 where ASCII.equalsIgnoringCase(n, "transfer-encoding"):
            // Only exactly `chunked`, once: anything else is a coding we do not do or an obfuscation attempt.
            guard !transferEncodingSeen, ASCII.equalsIgnoringCase(v, "chunked") else {
                throw HTTPServerError(.badRequest, "Only `Transfer-Encoding: chunked` is accepted.")
            }
            transferEncodingSeen = true
            chunked = true
        default:
            break
        }
    }

    private mutating func noteConnection(_ v: UnsafeBufferPointer<UInt8>) throws(HTTPServerError) {
        var start = 0
        while start <= v.count {
            var end = start
            while end < v.count, v[end] != ASCII.comma { end += 1 }
            let option = ASCII.trimmed(v, start..<end)
            let token = UnsafeBufferPointer(rebasing: v[option])
            if ASCII.equalsIgnoringCase(token, "close") {
                connectionClose = true
            } else if ASCII.equalsIgnoringCase(token, "keep-alive") {
                connectionKeepAlive = true
            }
            start = end + 1
        }
    }

    /// RFC 9112 3.2: `uri-host [ ":" port ]`, or empty. A list, a space, userinfo or any other byte is refused (400).
    static func isHost(_ v: UnsafeBufferPointer<UInt8>) -> Bool {
        let hostBytes = ASCII.host  // read once: each read of a static array is a `swift_once` call
        var i = 0
        if v.first == UInt8(ascii: "[") {
            while i < v.count, v[i] != UInt8(ascii: "]") { i += 1 }
            guard i < v.count, i > 1 else { return false }
            i += 1
            for j in 0..<i where !hostBytes[Int(v[j])] { return false }
        } else {
            while i < v.count, v[i] != ASCII.colon {
                guard hostBytes[Int(v[i])], v[i] != UInt8(ascii: "["), v[i] != UInt8(ascii: "]") else { return false }
                if v[i] == UInt8(ascii: "%") {
                    guard i + 2 < v.count, ASCII.hexValue(v[i + 1]) != nil, ASCII.hexValue(v[i + 2]) != nil else {
                        return false
                    }
                }
                i += 1
            }
        }
        guard i < v.count else { return true }
        guard v[i] == ASCII.colon else { return false }
        for j in (i + 1)..<v.count where v[j] < UInt8(ascii: "0") || v[j] > UInt8(ascii: "9") { return false }
        return true
    }

    /// 1*DIGIT, nothing else, no overflow.
    static func parseLength(_ v: UnsafeBufferPointer<UInt8>) throws(HTTPServerError) -> Int {
        guard !v.isEmpty, v.count <= 18 else {
            throw HTTPServerError(.badRequest, "Content-Length is empty or too large.")
        }
        var n = 0
        for b in v {
            guard b >= UInt8(ascii: "0"), b <= UInt8(ascii: "9") else {
                throw HTTPServerError(.badRequest, "Content-Length is not a decimal number.")
            }
            n = n * 10 + Int(b - UInt8(ascii: "0"))
        }
        return n
    }

    func framing(minorVersion: Int) throws(HTTPServerError) -> RequestHead.Framing {
        if transferEncodingSeen {
            guard contentLength == nil else {
                throw HTTPServerError(.badRequest, "Content-Length together with Transfer-Encoding.")
            }
            guard minorVersion >= 1 else {
                throw HTTPServerError(.badRequest, "Transfer-Encoding in an HTTP/1.0 request.")
            }
            return .chunked
        }
        if let contentLength, contentLength > 0 { return .length(contentLength) }
        return .none
    }
}
