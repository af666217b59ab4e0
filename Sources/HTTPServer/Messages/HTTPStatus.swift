/// Reason phrases and precomputed status lines; pure and immutable.
enum HTTPStatus {
    static func reason(_ status: Int) -> String {
        switch status {
        case 100: "Continue"
        case 200: "OK"
        case 201: "Created"
        case 202: "Accepted"
        case 204: "No Content"
        case 301: "Moved Permanently"
        case 302: "Found"
        case 304: "Not Modified"
        case 400: "Bad Request"
        case 401: "Unauthorized"
        case 403: "Forbidden"
        case 404: "Not Found"
        case 405: "Method Not Allowed"
        case 408: "Request Timeout"
        case 409: "Conflict"
        case 410: "Gone"
        case 412: "Precondition Failed"
        case 413: "Content Too Large"
        case 414: "URI Too Long"
        case 415: "Unsupported Media Type"
        case 417: "Expectation Failed"
        case 422: "Unprocessable Content"
        case 429: "Too Many Requests"
        case 431: "Request Header Fields Too Large"
        case 500: "Internal Server Error"
        case 501: "Not Implemented"
        case 503: "Service Unavailable"
        case 505: "HTTP Version Not Supported"
        case 507: "Insufficient Storage"
        default: "Status \(status)"
        }
    }

    /// `HTTP/1.1 NNN Reason\r\n` for the common codes, built once, at `code - 100` (an array, not a dictionary:
    /// every response looks its line up, and an index needs no hashing).
    static let lines: [[UInt8]?] = {
        var table = [[UInt8]?](repeating: nil, count: 500)
        for code in [
            100, 200, 201, 202, 204, 301, 302, 304, 400, 401, 403, 404, 405, 408, 409, 410, 412, 413, 414, 415,
            417, 422, 429, 431, 500, 501, 503, 505, 507,
        ] {
            table[code - 100] = Array("HTTP/1.1 \(code) \(reason(code))\r\n".utf8)
        }
        return table
    }()

    static func appendLine(_ status: Int, to out: inout [UInt8]) {
        if (100..<600).contains(status), let line = lines[status - 100] {
            // Through a buffer pointer: `append(contentsOf:)` takes an array as its own (a retain and a release).
            line.withUnsafeBufferPointer { out.append(contentsOf: $0) }
        } else {
            out.append(contentsOf: "HTTP/1.1 \(status) \(reason(status))\r\n".utf8)
        }
    }
}
