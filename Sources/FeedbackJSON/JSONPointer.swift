/// An RFC 6901 JSON Pointer such as `/items/0/name`, used by `?select=` and by JSON Patch paths.
public struct JSONPointer: Sendable, Hashable, CustomStringConvertible {
    /// The unescaped reference tokens; empty for the whole document.
    public let tokens: [String]

    /// Parses a pointer's text. Throws when it is neither empty nor starts with `/`, or has a bad `~` escape.
    public init(_ text: String) throws(JSONPointerError) {
        guard !text.isEmpty else {
            tokens = []
            return
        }
        guard text.hasPrefix("/") else {
            throw JSONPointerError(message: "a JSON Pointer is empty or starts with \"/\"; got \"\(text)\"")
        }
        var parsed: [String] = []
        for raw in text.dropFirst().split(separator: "/", omittingEmptySubsequences: false) {
            var token = ""
            var iterator = raw.makeIterator()
            while let character = iterator.next() {
                guard character == "~" else {
                    token.append(character)
                    continue
                }
                switch iterator.next() {
                case "0": token.append("~")
                case "1": token.append("/")
                default:
                    throw JSONPointerError(message: "in JSON Pointer \"\(text)\", \"~\" must be followed by 0 or 1")
                }
            }
            parsed.append(token)
        }
        tokens = parsed
    }

    /// A pointer from unescaped tokens.
    public init(tokens: [String]) {
        self.tokens = tokens
    }

    /// The pointer's text, with `~` and `/` escaped.
    public var description: String {
        var text = ""
        for token in tokens {
            text.append("/")
            for character in token {
                switch character {
                case "~": text.append("~0")
                case "/": text.append("~1")
                default: text.append(character)
                }
            }
        }
        return text
    }

    /// This pointer extended by one token.
    public func appending(_ token: String) -> JSONPointer {
        JSONPointer(tokens: tokens + [token])
    }

    /// The value this pointer refers to in `document`, or nil when there is none.
    public func resolve(in document: JSONValue) -> JSONValue? {
        var current = document
        for token in tokens {
            switch current {
            case .object(let members):
                guard let next = members[token] else { return nil }
                current = next
            case .array(let elements):
                guard let index = Self.arrayIndex(token), index < elements.count else { return nil }
                current = elements[index]
            default:
                return nil
            }
        }
        return current
    }

    /// An array index token per RFC 6901: digits without a leading zero.
    static func arrayIndex(_ token: String) -> Int? {
        guard let first = token.utf8.first, token.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else { return nil }
        if first == UInt8(ascii: "0") && token.utf8.count > 1 { return nil }
        return Int(token)
    }
}

/// A malformed JSON Pointer, or a JSON Patch that does not apply.
public struct JSONPointerError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What is wrong, for a person.
    public let message: String

    /// Creates the error.
    public init(message: String) {
        self.message = message
    }

    public var description: String { message }
}
