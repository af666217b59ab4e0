// libFuzzer target for the HTTP/1.1 request decoder the server serves through (`RequestDecoder`, fed as `Shard`
// feeds it). Compiled into one module together with the decoder's sources (see Fuzz/Makefile), so it can read the
// internal byte storage of `HTTPHeaders`.
//
// Input layout: byte 0 picks the piece size (1 to 16), whether the small limits apply and where the prefix is cut;
// the rest is the stream. Each head's path picks what a router would do with its body (read it up to the limit,
// read it up to a quarter of it, or discard it after an early answer), so body limits, discarding, pipelining and
// `100-continue` are fuzzed too. Every broken invariant calls `fatalError`, which libFuzzer reports as a crash and
// saves as a reproducer.

/// Small limits, so the fuzzer reaches the 414/431/413 paths with short inputs.
private let smallLimits = RequestParser.Limits(maxRequestLineLength: 64, maxHeaderBytes: 512, maxHeaderCount: 8)
private let smallBodyLimit = 256

/// Generous limits for re-parsing a re-serialized request (its field lines can be a byte longer each).
private let largeLimits = RequestParser.Limits(
    maxRequestLineLength: 1 << 16,
    maxHeaderBytes: 1 << 20,
    maxHeaderCount: 1 << 16
)

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzParser(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    guard let data, size > 0 else { return 0 }
    let control = data[0]
    let bytes = Array(UnsafeBufferPointer(start: data + 1, count: size - 1))
    let pieceSize = Int(control & 0x0F) + 1
    let small = control & 0x10 != 0
    let limits = small ? smallLimits : RequestParser.Limits()
    let bodyLimit = small ? smallBodyLimit : 1 << 20

    let policy = { (head: RequestHead) in route(head, bodyLimit: bodyLimit) }
    let whole = RequestDecoder.decode(bytes, limits: limits, bodyLimit: bodyLimit, policy: policy)
    let pieces = RequestDecoder.decode(
        bytes,
        pieceSize: pieceSize,
        limits: limits,
        bodyLimit: bodyLimit,
        policy: policy
    )
    check(pieces == whole, "pieces of \(pieceSize) bytes parse differently from the whole stream")
    checkStream(whole, inputCount: bytes.count, bodyLimit: bodyLimit)

    // The parser is online: a prefix of the input yields a prefix of the requests, and an error found in a prefix
    // is the error of the whole stream.
    let cut = Int(control >> 5) * bytes.count / 8
    let prefix = RequestDecoder.decode(Array(bytes[..<cut]), limits: limits, bodyLimit: bodyLimit, policy: policy)
    check(prefix.requests.count <= whole.requests.count, "a prefix yields more requests than the whole stream")
    check(
        Array(whole.requests.prefix(prefix.requests.count)) == prefix.requests,
        "a prefix yields requests the whole stream does not start with"
    )
    if let error = prefix.error {
        check(
            whole.error == error,
            "a prefix fails with \(error) but the whole stream with \(String(describing: whole.error))"
        )
        check(whole.requests.count == prefix.requests.count, "requests parsed after an error")
    }

    for request in whole.requests where !isDiscarded(request.head, bodyLimit: bodyLimit) { checkRoundTrip(request) }
    return 0
}

/// What a router would do with a body, decided by the path alone so that every split of the input agrees.
private func route(_ head: RequestHead, bodyLimit: Int) -> RequestDecoder.BodyPolicy {
    switch head.path.utf8.count % 3 {
    case 0: .read(limit: bodyLimit)
    case 1: .read(limit: bodyLimit / 4)
    default: .discard(limit: bodyLimit / 2)
    }
}

private func isDiscarded(_ head: RequestHead, bodyLimit: Int) -> Bool {
    if case .discard = route(head, bodyLimit: bodyLimit) { return head.framing != .none }
    return false
}

private func check(_ condition: Bool, _ message: @autoclosure () -> String) {
    if !condition { fatalError("invariant broken: \(message())") }
}

/// What every parsed stream and every parsed request must satisfy.
private func checkStream(_ stream: RequestDecoder.DecodedStream, inputCount: Int, bodyLimit: Int) {
    check(stream.pendingBytes >= 0 && stream.pendingBytes <= inputCount, "pendingBytes out of range")
    if stream.error != nil { check(stream.pendingBytes == 0, "pendingBytes reported with an error") }
    var consumedAtLeast = 0
    for request in stream.requests {
        let head = request.head
        check(head.minorVersion == 0 || head.minorVersion == 1, "minor version \(head.minorVersion)")
        let policy = route(head, bodyLimit: bodyLimit)
        let discarded = isDiscarded(head, bodyLimit: bodyLimit)
        if case .read(let limit) = policy {
            check(request.body.count <= limit, "a body of \(request.body.count) bytes passed a limit of \(limit)")
        }
        if discarded { check(request.body.isEmpty, "a discarded body was reported") }
        check(
            request.continueRequested == (head.expectsContinue && !discarded),
            "100 Continue asked for \(request.continueRequested) with expectsContinue \(head.expectsContinue)"
        )
        let lengths = head.headers.fields.filter { head.headers.nameEquals($0, "content-length") }
        let encodings = head.headers.fields.filter { head.headers.nameEquals($0, "transfer-encoding") }
        check(lengths.count <= 1, "more than one Content-Length accepted")
        check(lengths.isEmpty || encodings.isEmpty, "Content-Length and Transfer-Encoding accepted together")
        switch head.framing {
        case .none:
            check(request.body.isEmpty, "a body without framing")
            check(encodings.isEmpty, "Transfer-Encoding without chunked framing")
            if let field = lengths.first {
                check(decimal(head.headers.valueBytes(field)) == 0, "Content-Length > 0 without length framing")
            }
        case .length(let n):
            check(n > 0, "length framing of \(n)")
            check(
                discarded || request.body.count == n,
                "Content-Length \(n) gave a body of \(request.body.count) bytes"
            )
            check(lengths.count == 1 && decimal(head.headers.valueBytes(lengths[0])) == n, "length \(n) not declared")
        case .chunked:
            check(head.minorVersion == 1, "chunked framing in HTTP/1.0")
            check(encodings.count == 1 && lengths.isEmpty, "chunked framing without exactly one Transfer-Encoding")
        }
        if head.framing != .chunked { check(request.trailers.count == 0, "trailers without chunked framing") }
        if head.minorVersion == 1 {
            check(head.headers.fields.filter { head.headers.nameEquals($0, "host") }.count == 1, "Host count != 1")
        }
        checkFieldBytes(head.headers)
        checkFieldBytes(request.trailers)
        check(head.path.first == "/" || head.path == "*", "path \(head.path) is neither origin-form nor *")
        check(head.target.utf8.allSatisfy { $0 > 0x20 && $0 < 0x7F }, "target with a byte outside visible ASCII")
        if head.expectsContinue { check(head.framing != .none, "100-continue without a body") }
        consumedAtLeast += head.target.utf8.count + 14 + request.body.count
    }
    check(consumedAtLeast <= inputCount, "requests hold more bytes than the input")
}

/// Field names are tokens; values hold no CR, LF, NUL and no surrounding whitespace.
private func checkFieldBytes(_ headers: HTTPHeaders) {
    for field in headers.fields {
        let name = headers.nameBytes(field)
        let value = headers.valueBytes(field)
        check(!name.isEmpty && name.allSatisfy { ASCII.token[Int($0)] }, "a field name that is not a token")
        check(value.allSatisfy { ASCII.fieldValue[Int($0)] }, "a field value with CR, LF, NUL or a control byte")
        if let first = value.first, let last = value.last {
            check(!ASCII.isWhitespace(first) && !ASCII.isWhitespace(last), "a field value with untrimmed whitespace")
        }
    }
}

/// Serializes a parsed request canonically and parses it again: it must come back identical.
private func checkRoundTrip(_ request: RequestDecoder.DecodedRequest) {
    let head = request.head
    var bytes = Array("\(head.method.rawValue) \(head.target) HTTP/1.\(head.minorVersion)\r\n".utf8)
    appendFields(head.headers, to: &bytes)
    bytes += [ASCII.cr, ASCII.lf]
    switch head.framing {
    case .none:
        break
    case .length:
        bytes += request.body
    case .chunked:
        if !request.body.isEmpty {
            bytes += Array(String(request.body.count, radix: 16).utf8) + [ASCII.cr, ASCII.lf]
            bytes += request.body + [ASCII.cr, ASCII.lf]
        }
        bytes += Array("0\r\n".utf8)
        appendFields(request.trailers, to: &bytes)
        bytes += [ASCII.cr, ASCII.lf]
    }
    let again = RequestDecoder.decode(bytes, limits: largeLimits, bodyLimit: 1 << 20)
    check(again.error == nil, "a re-serialized request fails: \(String(describing: again.error))")
    check(again.pendingBytes == 0, "a re-serialized request leaves \(again.pendingBytes) bytes")
    check(again.requests == [request], "a re-serialized request parses differently")
}

private func appendFields(_ headers: HTTPHeaders, to bytes: inout [UInt8]) {
    for field in headers.fields {
        bytes += headers.nameBytes(field)
        bytes += [ASCII.colon, ASCII.sp]
        bytes += headers.valueBytes(field)
        bytes += [ASCII.cr, ASCII.lf]
    }
}

private func decimal(_ bytes: ArraySlice<UInt8>) -> Int? {
    var n = 0
    for b in bytes {
        guard b >= UInt8(ascii: "0"), b <= UInt8(ascii: "9"), n < Int.max / 10 - 10 else { return nil }
        n = n * 10 + Int(b - UInt8(ascii: "0"))
    }
    return bytes.isEmpty ? nil : n
}
