/// The percent-decoded values of a route's `{name}` segments, by name.
///
/// A route has one or two parameters: they are kept in order and found by comparing names, the first in the value
/// itself, so that a request to a route with one parameter (the usual case) allocates nothing for them and hashes
/// no name.
public struct PathParameters: Sendable, Equatable, ExpressibleByDictionaryLiteral {
    struct Parameter: Sendable, Equatable {
        var name: String
        var value: String
    }

    private var first: Parameter?
    private var rest: [Parameter] = []

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
            if let first, first.name == name { return first.value }
            return rest.first { $0.name == name }?.value
        }
        set {
            if first?.name == name {
                first = newValue.map { Parameter(name: name, value: $0) } ?? (rest.isEmpty ? nil : rest.removeFirst())
            } else if let index = rest.firstIndex(where: { $0.name == name }) {
                if let newValue { rest[index].value = newValue } else { rest.remove(at: index) }
            } else if let newValue {
                if first == nil {
                    first = Parameter(name: name, value: newValue)
                } else {
                    rest.append(Parameter(name: name, value: newValue))
                }
            }
        }
    }

    /// The parameters in route order, as a dictionary.
    public var dictionary: [String: String] {
        var all: [String: String] = [:]
        if let first { all[first.name] = first.value }
        for parameter in rest { all[parameter.name] = parameter.value }
        return all
    }

    public static func == (lhs: PathParameters, rhs: PathParameters) -> Bool { lhs.dictionary == rhs.dictionary }
}
