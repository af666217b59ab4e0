/// The links of an HTTP `Link` header (RFC 8288), for following paged APIs (`rel="next"`).
///
/// Parses several links in one value, several values (pass each, or join them with commas), quoted and
/// unquoted parameters with backslash escapes, and several relation types in one `rel`. Malformed input
/// yields the links parsed before the fault. A value type: safe to pass anywhere.
public struct LinkHeader: Sendable, Hashable {
    /// One link: a target and its parameters.
    public struct Link: Sendable, Hashable {
        /// The URI between `<` and `>`, as written (may be relative to the request's URL).
        public var target: String
        /// The relation types from `rel`, lowercased.
        public var relations: [String]
        /// Every parameter in order, names lowercased, values unquoted.
        public var parameters: [Parameter]

        /// The value of the first parameter with this name (lowercase), or nil.
        public subscript(parameter name: String) -> String? {
            parameters.first { $0.name == name }?.value
        }
    }

    /// A link parameter: `name=value`, or `name` alone (empty value).
    public struct Parameter: Sendable, Hashable {
        /// The parameter name, lowercased.
        public var name: String
        /// The unquoted value.
        public var value: String
    }

    /// The links in order.
    public var links: [Link]

    /// The target of the first link with this relation type (case-insensitive), or nil.
    public func target(rel: String) -> String? {
        let wanted = rel.lowercased()
        return links.first { $0.relations.contains(wanted) }?.target
    }

    /// The `rel="next"` target, or nil on the last page.
    public var next: String? { target(rel: "next") }

    /// Parses the values of every `Link` field of a response.
    public static func parse(_ values: [String]) -> LinkHeader {
        LinkHeader(links: values.flatMap { parse($0).links })
    }

    /// Parses one `Link` field value.
    public static func parse(_ value: String) -> LinkHeader {
        var scanner = Scanner(Array(value.utf8))
        var links: [Link] = []
        while let link = scanner.link() {
            links.append(link)
        }
        return LinkHeader(links: links)
    }
}

private struct Scanner {
    let bytes: [UInt8]
    var index = 0

    init(_ bytes: [UInt8]) {
        self.bytes = bytes
    }

    mutating func link() -> LinkHeader.Link? {
        skip { $0 == UInt8(ascii: ",") || isSpace($0) }
        guard take(UInt8(ascii: "<")) else { return nil }
        let start = index
        while index < bytes.count, bytes[index] != UInt8(ascii: ">") { index += 1 }
        guard index < bytes.count else { return nil }
        let target = String(decoding: bytes[start..<index], as: UTF8.self)
        index += 1
        var link = LinkHeader.Link(target: target, relations: [], parameters: [])
        var sawRel = false
        while true {
            skip(isSpace)
            guard take(UInt8(ascii: ";")) else { break }
            skip(isSpace)
            let name = token().lowercased()
            guard !name.isEmpty else { break }
            skip(isSpace)
            var value = ""
            if take(UInt8(ascii: "=")) {
                skip(isSpace)
                value = peek == UInt8(ascii: "\"") ? quoted() : token()
            }
            link.parameters.append(LinkHeader.Parameter(name: name, value: value))
            if name == "rel", !sawRel {
                // RFC 8288 3.3: only the first rel counts.
                sawRel = true
                link.relations = value.split(whereSeparator: { $0 == " " || $0 == "\t" }).map { $0.lowercased() }
            }
        }
        // Skip whatever does not parse up to the next link.
        while index < bytes.count, bytes[index] != UInt8(ascii: ",") { index += 1 }
        return link
    }

    var peek: UInt8? { index < bytes.count ? bytes[index] : nil }

    mutating func take(_ byte: UInt8) -> Bool {
        guard peek == byte else { return false }
        index += 1
        return true
    }

    mutating func skip(_ predicate: (UInt8) -> Bool) {
        while let byte = peek, predicate(byte) { index += 1 }
    }

    mutating func token() -> String {
        let start = index
        while let byte = peek, !isSpace(byte), byte != UInt8(ascii: ";"), byte != UInt8(ascii: ","),
            byte != UInt8(ascii: "=")
        {
            index += 1
        }
        return String(decoding: bytes[start..<index], as: UTF8.self)
    }

    mutating func quoted() -> String {
        index += 1
        var value: [UInt8] = []
        while let byte = peek {
            index += 1
            if byte == UInt8(ascii: "\\"), let escaped = peek {
                index += 1
                value.append(escaped)
            } else if byte == UInt8(ascii: "\"") {
                break
            } else {
                value.append(byte)
            }
        }
        return String(decoding: value, as: UTF8.self)
    }
}

private func isSpace(_ byte: UInt8) -> Bool {
    byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t")
}
