import Upstream

/// Collects the header lines libcurl reports, one response block at a time.
///
/// libcurl hands over the status line, each field line and the empty line that ends a block; with redirects or
/// `100 Continue` several blocks arrive, and only the last complete one describes the response. A value type owned
/// by its transfer (on the client's queue).
struct HeadParser {
    private(set) var status = 0
    private(set) var headers = UpstreamHeaders()
    /// True once the current block's empty line arrived.
    private(set) var blockComplete = false

    /// Feeds one raw header line (with its line ending). Returns true when it ended a block.
    mutating func feed(_ line: UnsafeRawBufferPointer) -> Bool {
        var end = line.count
        while end > 0, line[end - 1] == UInt8(ascii: "\r") || line[end - 1] == UInt8(ascii: "\n") {
            end -= 1
        }
        if end == 0 {
            blockComplete = true
            return true
        }
        let text = String(decoding: UnsafeRawBufferPointer(rebasing: line[0..<end]), as: UTF8.self)
        if text.hasPrefix("HTTP/") {
            status = Self.status(of: text)
            headers = UpstreamHeaders()
            blockComplete = false
            return false
        }
        if blockComplete {
            // Trailer fields after a chunked body: not part of the head.
            return false
        }
        if let first = text.utf8.first, first == UInt8(ascii: " ") || first == UInt8(ascii: "\t") {
            // Obsolete line folding: continue the previous field's value.
            if var last = headers.fields.last {
                last.value += " " + Self.trimmed(Substring(text))
                var fields = headers.fields
                fields[fields.count - 1] = last
                headers = UpstreamHeaders(fields)
            }
            return false
        }
        guard let colon = text.firstIndex(of: ":") else { return false }
        headers.add(Self.trimmed(text[..<colon]), Self.trimmed(text[text.index(after: colon)...]))
        return false
    }

    private static func status(of line: String) -> Int {
        let parts = line.split(separator: " ", maxSplits: 2, omittingEmptySubsequences: true)
        guard parts.count >= 2, let code = Int(parts[1]) else { return 0 }
        return code
    }

    private static func trimmed(_ text: Substring) -> String {
        var slice = text[...]
        while let first = slice.first, first == " " || first == "\t" { slice = slice.dropFirst() }
        while let last = slice.last, last == " " || last == "\t" { slice = slice.dropLast() }
        return String(slice)
    }
}
