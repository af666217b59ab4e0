import FeedbackJSON

/// Serializes response heads and bodies into a connection's output buffer. Pure functions over bytes.
enum ResponseWriter {
    static let continueLine: [UInt8] = Array("HTTP/1.1 100 Continue\r\n\r\n".utf8)
    static let lastChunk: [UInt8] = Array("0\r\n\r\n".utf8)
    private static let hex: [UInt8] = Array("0123456789abcdef".utf8)

    /// Whether a handler's header field can be sent as is (no CR, LF or NUL; a token name).
    static func isValid(_ headers: HTTPHeaders) -> Bool {
        let token = ASCII.token  // read once: each read of a static array is a `swift_once` call
        var valid = true
        headers.forEachField { _, name, value in
            valid = !name.isEmpty && name.allSatisfy { token[Int($0)] } && ASCII.allFieldValue(value)
            return valid
        }
        return valid
    }

    /// Appends the status line, the handler's fields, framing fields, `Date` and the blank line.
    static func appendHead(
        status: Int,
        headers: HTTPHeaders,
        contentLength: Int?,
        chunked: Bool,
        keepAlive: Bool,
        minorVersion: Int,
        date: [UInt8],
        to out: inout [UInt8]
    ) {
        HTTPStatus.appendLine(status, to: &out)
        headers.forEachField { _, name, value in
            out.append(contentsOf: name)
            out.append(ASCII.colon)
            out.append(ASCII.sp)
            out.append(contentsOf: value)
            out.append(ASCII.cr)
            out.append(ASCII.lf)
            return true
        }
        if let contentLength {
            out.append(contentsOf: "Content-Length: ".utf8)
            DecimalText.append(UInt64(max(0, contentLength)), to: &out)
            out.append(ASCII.cr)
            out.append(ASCII.lf)
        }
        if chunked { out.append(contentsOf: "Transfer-Encoding: chunked\r\n".utf8) }
        if !keepAlive {
            out.append(contentsOf: "Connection: close\r\n".utf8)
        } else if minorVersion == 0 {
            out.append(contentsOf: "Connection: keep-alive\r\n".utf8)
        }
        out.append(contentsOf: date)
        out.append(ASCII.cr)
        out.append(ASCII.lf)
    }

    static func appendChunk(_ bytes: [UInt8], to out: inout [UInt8]) {
        // The size in hex, most significant digit first, without a temporary array.
        var shift = 0
        while bytes.count >> (shift + 4) > 0 { shift += 4 }
        while shift >= 0 {
            out.append(hex[(bytes.count >> shift) & 15])
            shift -= 4
        }
        out.append(ASCII.cr)
        out.append(ASCII.lf)
        out.append(contentsOf: bytes)
        out.append(ASCII.cr)
        out.append(ASCII.lf)
    }
}
