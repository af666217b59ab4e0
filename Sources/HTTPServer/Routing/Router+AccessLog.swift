extension Router {
    /// Segments longer than this are redacted from a path that matches no route: a mistyped route must not write
    /// the credential it carries (a session id is 22 characters) into the log.
    static let longestLoggedSegment = 15

    /// Appends what the access log shows for `path`: the pattern of the route it matches, whatever the method
    /// (`/v1/sessions/{id}/events`), so that parameters, which may be credentials, never reach the log; a path
    /// matching a literal route as it is; any other path with segments longer than ``longestLoggedSegment`` bytes
    /// written as `{redacted}`. Bytes outside printable ASCII, `"` and `\` are percent-encoded, so a line stays one
    /// line in either format. Allocates nothing for paths of up to 16 segments.
    func appendRoute(of path: String, to out: inout [UInt8]) {
        var scanned = path
        scanned.withUTF8 { bytes in
            withUnsafeTemporaryAllocation(of: Range<Int>.self, capacity: Self.mostSegments) { room in
                // More segments than the room holds: more than any route has, so no route matches.
                let split = Self.split(bytes, into: room)
                if split.count >= 0,
                    let index = template(for: bytes, parts: UnsafeBufferPointer(rebasing: room[..<split.count]))
                {
                    return out.append(contentsOf: parameterRoutes[index].pattern)
                }
                // Only a path with a long segment needs the literal routes' table (a hash of the path).
                Self.appendRedacted(bytes, keepLongSegments: split.long && staticRoutes[path] != nil, to: &out)
            }
        }
    }

    /// The index of the first parameter route whose literals match the path's segments.
    private func template(for bytes: UnsafeBufferPointer<UInt8>, parts: UnsafeBufferPointer<Range<Int>>) -> Int? {
        guard parts.count < parameterRoutesBySegmentCount.count else { return nil }
        return parameterRoutesBySegmentCount[parts.count].first { literalsMatch(route: $0, parts, bytes) }
    }

    private static func appendRedacted(
        _ bytes: UnsafeBufferPointer<UInt8>,
        keepLongSegments: Bool,
        to out: inout [UInt8]
    ) {
        if bytes.isEmpty { return out.append(UInt8(ascii: "/")) }
        var start = 0
        for index in 0...bytes.count where index == bytes.count || bytes[index] == UInt8(ascii: "/") {
            if index - start > longestLoggedSegment, !keepLongSegments {
                out.append(contentsOf: "{redacted}".utf8)
            } else {
                for byte in bytes[start..<index] { appendEscaped(byte, to: &out) }
            }
            if index < bytes.count { out.append(UInt8(ascii: "/")) }
            start = index + 1
        }
    }

    private static func appendEscaped(_ byte: UInt8, to out: inout [UInt8]) {
        guard byte <= 0x20 || byte >= 0x7F || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") else {
            return out.append(byte)
        }
        let hex: [UInt8] = Array("0123456789ABCDEF".utf8)
        out.append(UInt8(ascii: "%"))
        out.append(hex[Int(byte >> 4)])
        out.append(hex[Int(byte & 0x0F)])
    }
}
