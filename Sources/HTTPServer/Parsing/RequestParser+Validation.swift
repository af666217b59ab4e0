extension RequestParser {
    /// Validates a complete head: request line, every field line, and the framing the fields imply.
    /// `fields` is the number of field lines.
    static func validate(
        _ buffer: UnsafeBufferPointer<UInt8>,
        requestLine: Range<Int>,
        fieldsEnd: Int,
        fields: Int
    ) throws(HTTPServerError) -> RequestHead {
        let (methodRange, targetRange, minor) = try parseRequestLine(buffer, requestLine)
        guard let method = HTTPMethod.parse(UnsafeBufferPointer(rebasing: buffer[methodRange])) else {
            throw HTTPServerError(.notImplemented, "The method is not implemented.")
        }
        let start = requestLine.upperBound + 2
        var semantics = FieldSemantics()
        // `parseHead` judged every byte of these lines a field value's already.
        let headers = try fieldLines(buffer, start..<max(start, fieldsEnd - 2), count: fields, valuesChecked: true) {
            (name, value) throws(HTTPServerError) in try semantics.note(buffer, name: name, value: value)
        }
        let targetBytes = UnsafeBufferPointer(rebasing: buffer[targetRange])
        let target = String(decoding: targetBytes, as: UTF8.self)
        // The usual origin-form without a query is its own path: the `?` looked for in the bytes, not the string.
        let (path, query) =
            targetBytes.first == UInt8(ascii: "/") && !targetBytes.contains(UInt8(ascii: "?"))
            ? (target, nil) : try splitTarget(target, method: method)
        let framing = try semantics.framing(minorVersion: minor)
        let keepAlive = minor >= 1 ? !semantics.connectionClose : semantics.connectionKeepAlive
        if minor >= 1, semantics.hostCount != 1 {
            throw HTTPServerError(.badRequest, "HTTP/1.1 needs exactly one Host header.")
        }
        if semantics.hostCount > 1 {
            throw HTTPServerError(.badRequest, "More than one Host header.")
        }
        return RequestHead(
            method: method,
            path: path,
            query: query,
            headers: headers,
            minorVersion: minor,
            framing: framing,
            keepAlive: keepAlive && !semantics.connectionClose,
            expectsContinue: semantics.expectsContinue && framing != .none,
            target: target
        )
    }

    /// The field lines in `lines` of `buffer` (`count` of them, each ended by CRLF) as a list, written in place into
    /// one allocation: the fields' bytes are at most the lines' (separators and whitespace are dropped), plus 8 bytes
    /// of lengths a field. Each line is parsed (its value's bytes judged unless `valuesChecked`) and shown to `note`
    /// first: a head's fields and a chunked body's trailers.
    static func fieldLines(
        _ buffer: UnsafeBufferPointer<UInt8>,
        _ lines: Range<Int>,
        count: Int,
        valuesChecked: Bool,
        note: (Range<Int>, Range<Int>) throws(HTTPServerError) -> Void = { _, _ in }
    ) throws(HTTPServerError) -> HTTPHeaders {
        var failure: HTTPServerError?
        let headers = HTTPHeaders(capacity: lines.count + count * 8) { writer in
            var lineStart = lines.lowerBound
            while lineStart < lines.upperBound {
                let lineEnd = ASCII.firstCR(in: buffer, from: lineStart)
                do throws(HTTPServerError) {
                    let (name, value) = try parseFieldLine(buffer, lineStart..<lineEnd, valuesChecked: valuesChecked)
                    try note(name, value)
                    guard writer.add(buffer, name: name, value: value) else {
                        throw HTTPServerError(.headerFieldsTooLarge, "The header block is too large.")
                    }
                } catch {
                    failure = error
                    return
                }
                lineStart = lineEnd + 2
            }
        }
        if let failure { throw failure }
        return headers
    }

    /// method SP request-target SP HTTP-version, nothing else.
    static func parseRequestLine(
        _ buffer: UnsafeBufferPointer<UInt8>,
        _ line: Range<Int>
    ) throws(HTTPServerError) -> (method: Range<Int>, target: Range<Int>, minor: Int) {
        let token = ASCII.token  // read once: each read of a static array is a `swift_once` call
        let targetBytes = ASCII.target
        var i = line.lowerBound
        while i < line.upperBound, token[Int(buffer[i])] { i += 1 }
        guard i > line.lowerBound, i < line.upperBound, buffer[i] == ASCII.sp else {
            throw HTTPServerError(.badRequest, "The request line has an invalid method.")
        }
        let method = line.lowerBound..<i
        i += 1
        let targetStart = i
        if let base = buffer.baseAddress {  // eight bytes at a time while all eight may be in a target
            while i + 8 <= line.upperBound, ASCII.allTarget(ASCII.word(base, i)) { i += 8 }
        }
        while i < line.upperBound, targetBytes[Int(buffer[i])] { i += 1 }
        guard i > targetStart, i < line.upperBound, buffer[i] == ASCII.sp else {
            throw HTTPServerError(.badRequest, "The request line has an invalid target.")
        }
        let target = targetStart..<i
        i += 1
        let version = UnsafeBufferPointer(rebasing: buffer[i..<line.upperBound])
        guard version.count == 8, version[0] == UInt8(ascii: "H"), version[1] == UInt8(ascii: "T"),
            version[2] == UInt8(ascii: "T"), version[3] == UInt8(ascii: "P"), version[4] == UInt8(ascii: "/"),
            version[6] == UInt8(ascii: "."),
            let major = decimal(version[5]), let minor = decimal(version[7])
        else {
            throw HTTPServerError(.badRequest, "The request line has an invalid HTTP version.")
        }
        guard major == 1 else {
            throw HTTPServerError(.versionNotSupported, "Only HTTP/1.x is supported.")
        }
        return (method, target, min(minor, 1))
    }

    /// field-name ":" OWS field-value OWS, with no whitespace before the colon and no obs-fold. `valuesChecked`: every
    /// byte of the line is known to be one a field value may hold (a head's lines, which `parseHead` judged byte by
    /// byte), so the value's bytes are not looked at again.
    static func parseFieldLine(
        _ buffer: UnsafeBufferPointer<UInt8>,
        _ line: Range<Int>,
        valuesChecked: Bool = false
    ) throws(HTTPServerError) -> (name: Range<Int>, value: Range<Int>) {
        guard line.lowerBound < line.upperBound, !ASCII.isWhitespace(buffer[line.lowerBound]) else {
            throw HTTPServerError(.badRequest, "Line folding (obs-fold) is not accepted.")
        }
        let token = ASCII.token  // read once: each read of a static array is a `swift_once` call
        var i = line.lowerBound
        while i < line.upperBound, token[Int(buffer[i])] { i += 1 }
        guard i > line.lowerBound, i < line.upperBound, buffer[i] == ASCII.colon else {
            throw HTTPServerError(.badRequest, "A header field has an invalid name or no colon right after it.")
        }
        let name = line.lowerBound..<i
        let value = ASCII.trimmed(buffer, (i + 1)..<line.upperBound)
        if valuesChecked { return (name, value) }
        let fieldValueBytes = ASCII.fieldValue
        for j in value where !fieldValueBytes[Int(buffer[j])] {
            throw HTTPServerError(.badRequest, "A header field value holds an invalid character.")
        }
        return (name, value)
    }

    static func splitTarget(_ target: String, method: HTTPMethod) throws(HTTPServerError) -> (String, String?) {
        // The usual origin-form, scanned as bytes: Character operations would run grapheme breaking over the path.
        if target.utf8.first == UInt8(ascii: "/") {
            guard let q = target.utf8.firstIndex(of: UInt8(ascii: "?")) else { return (target, nil) }
            return (String(target[..<q]), String(target[target.utf8.index(after: q)...]))
        }
        var rest = Substring(target)
        if rest == "*" {
            guard method == .options else { throw HTTPServerError(.badRequest, "`*` is only a target for OPTIONS.") }
            return ("*", nil)
        }
        if !rest.hasPrefix("/") {
            // absolute-form: "http://" or "https://" authority [path]
            let lower = rest.prefix(8).lowercased()
            if lower.hasPrefix("http://") {
                rest = rest.dropFirst(7)
            } else if lower.hasPrefix("https://") {
                rest = rest.dropFirst(8)
            } else {
                throw HTTPServerError(.badRequest, "The request target is neither origin-form nor absolute-form.")
            }
            guard let slash = rest.firstIndex(where: { $0 == "/" || $0 == "?" }) else { return ("/", nil) }
            rest = rest[slash...]
            if rest.first == "?" { return ("/", String(rest.dropFirst())) }
        }
        if let q = rest.firstIndex(of: "?") {
            return (String(rest[..<q]), String(rest[rest.index(after: q)...]))
        }
        return (String(rest), nil)
    }

    private static func decimal(_ b: UInt8) -> Int? {
        b >= UInt8(ascii: "0") && b <= UInt8(ascii: "9") ? Int(b - UInt8(ascii: "0")) : nil
    }
}
