import FeedbackJSON

/// Serializes response heads and bodies into a connection's output buffer. Pure functions over bytes.
enum ResponseWriter {
    static let continueLine: [UInt8] = Array("HTTP/1.1 100 Continue\r\n\r\n".utf8)
    static let lastChunk: [UInt8] = Array("0\r\n\r\n".utf8)
    private static let hex: [UInt8] = Array("0123456789abcdef".utf8)

    /// Whether a handler's header fields can be sent as they are (no CR, LF or NUL; a token name): at once for the
    /// package's own answers' fields (`HTTPHeaders.knownValid`), else judged field by field.
    static func isValid(_ headers: HTTPHeaders) -> Bool {
        headers.knownValid || isEachFieldValid(headers)
    }

    /// Whether every field of `headers` has a token name and a value of field-value bytes, judged byte by byte.
    static func isEachFieldValid(_ headers: HTTPHeaders) -> Bool {
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
        // The head is written once into scratch room as long as it can be (the fields' text is their storage less
        // four bytes of lengths a field), then appended to `out` in one copy, instead of a dozen appends that each
        // checked the array's room and uniqueness.
        var line = (100..<600).contains(status) ? HTTPStatus.lines[status - 100] ?? [] : []
        if line.isEmpty { HTTPStatus.appendLine(status, to: &line) }  // a status without a precomputed line
        let framing =
            contentLengthName.utf8CodeUnitCount + 22 + transferEncodingChunked.utf8CodeUnitCount
            + connectionKeepAlive.utf8CodeUnitCount
        let bound = line.count + headers.storage.count - 4 * headers.count + framing + date.count + 2
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: bound) { scratch in
            let base = scratch.baseAddress!
            var at = base
            func put(_ bytes: UnsafeBufferPointer<UInt8>) {
                if let source = bytes.baseAddress { at.initialize(from: source, count: bytes.count) }
                at += bytes.count
            }
            func put(_ bytes: [UInt8]) { bytes.withUnsafeBufferPointer { put($0) } }
            func put(_ text: StaticString) {
                at.initialize(from: text.utf8Start, count: text.utf8CodeUnitCount)
                at += text.utf8CodeUnitCount
            }
            func endLine() {
                at[0] = ASCII.cr
                at[1] = ASCII.lf
                at += 2
            }
            put(line)
            headers.forEachField { _, name, value in
                put(name)
                at[0] = ASCII.colon
                at[1] = ASCII.sp
                at += 2
                put(value)
                endLine()
                return true
            }
            if let contentLength {
                put(contentLengthName)
                at += DecimalText.write(UInt64(max(0, contentLength)), to: at)
                endLine()
            }
            if chunked { put(transferEncodingChunked) }
            if !keepAlive {
                put(connectionClose)
            } else if minorVersion == 0 {
                put(connectionKeepAlive)
            }
            put(date)
            endLine()
            out.append(contentsOf: UnsafeBufferPointer(start: base, count: at - base))
        }
    }

    private static let contentLengthName: StaticString = "Content-Length: "
    private static let transferEncodingChunked: StaticString = "Transfer-Encoding: chunked\r\n"
    private static let connectionClose: StaticString = "Connection: close\r\n"
    private static let connectionKeepAlive: StaticString = "Connection: keep-alive\r\n"

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
