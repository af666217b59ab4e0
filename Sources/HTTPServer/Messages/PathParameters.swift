/// The percent-decoded values of a route's `{name}` segments, by name.
///
/// A route has one or two parameters: they are kept in order and found by comparing names, the first in the value
/// itself, so that a request to a route with one parameter (the usual case) allocates nothing for them and hashes
/// no name.
public struct PathParameters: Sendable, Equatable, ExpressibleByDictionaryLiteral {
    @usableFromInline
    struct Parameter: Sendable, Equatable {
        @usableFromInline var name: String
        @usableFromInline var value: Stored
    }

    /// A parameter's value: text, or where it lies in `source` (a path segment with nothing to percent-decode, which
    /// the router leaves there: a request that only reads its bytes, such as a session id, makes no string of it).
    @usableFromInline
    enum Stored: Sendable, Equatable {
        case text(String)
        case span(Range<Int>)
    }

    @usableFromInline var first: Parameter?
    @usableFromInline var rest: [Parameter] = []
    /// The path the spans are in (the router's; the same string as the request's, not a copy).
    @usableFromInline var source = ""

    /// No parameters.
    public init() {}

    /// Parameters from name/value pairs (a later value of a name replaces an earlier one).
    public init(dictionaryLiteral elements: (String, String)...) {
        for (name, value) in elements { self[name] = value }
    }

    /// The number of parameters.
    public var count: Int { (first == nil ? 0 : 1) + rest.count }

    /// The value of the parameter `name`, if the route has one.
    public subscript(_ name: String) -> String? {
        get {
            guard let value = value(name) else { return nil }
            return text(value)
        }
        set {
            if first?.name == name {
                first =
                    newValue.map { Parameter(name: name, value: .text($0)) }
                    ?? (rest.isEmpty ? nil : rest.removeFirst())
            } else if let index = rest.firstIndex(where: { $0.name == name }) {
                if let newValue { rest[index].value = .text(newValue) } else { rest.remove(at: index) }
            } else if let newValue {
                if first == nil {
                    first = Parameter(name: name, value: .text(newValue))
                } else {
                    rest.append(Parameter(name: name, value: .text(newValue)))
                }
            }
        }
    }

    /// Calls `body` with the UTF-8 bytes of the parameter `name` (percent-decoded, as the subscript's value) and
    /// returns what it returns; nil when the route has no such parameter. A value the router left in the path is
    /// read there, with no string made.
    @inlinable
    public func withUTF8<Result>(_ name: String, _ body: (UnsafeBufferPointer<UInt8>) -> Result) -> Result? {
        switch value(name) {
        case nil:
            return nil
        case .text(let text)?:
            return Self.withBytes(of: text, body)
        case .span(let range)?:
            return Self.withBytes(of: source) { body(UnsafeBufferPointer(rebasing: $0[range])) }
        }
    }

    /// The parameters in route order, as a dictionary.
    public var dictionary: [String: String] {
        var all: [String: String] = [:]
        if let first { all[first.name] = text(first.value) }
        for parameter in rest { all[parameter.name] = text(parameter.value) }
        return all
    }

    public static func == (lhs: PathParameters, rhs: PathParameters) -> Bool { lhs.dictionary == rhs.dictionary }

    /// Adds the parameter `name` whose value is the bytes at `range` of the path `path` as they are (they need no
    /// percent-decoding): the router's way.
    mutating func add(_ name: String, at range: Range<Int>, of path: String) {
        source = path
        let parameter = Parameter(name: name, value: .span(range))
        if first == nil { first = parameter } else { rest.append(parameter) }
    }

    /// `text`'s UTF-8 bytes where they lie (a native string's), else from a contiguous copy.
    @inlinable
    static func withBytes<Result>(of text: String, _ body: (UnsafeBufferPointer<UInt8>) -> Result) -> Result {
        if let result = text.utf8.withContiguousStorageIfAvailable(body) { return result }
        var copy = text
        return copy.withUTF8(body)
    }

    @inlinable
    func value(_ name: String) -> Stored? {
        if let first, first.name == name { return first.value }
        return rest.first { $0.name == name }?.value
    }

    private func text(_ value: Stored) -> String {
        switch value {
        case .text(let text): text
        case .span(let range):
            Self.withBytes(of: source) { String(decoding: UnsafeBufferPointer(rebasing: $0[range]), as: UTF8.self) }
        }
    }
}
