/// An RFC 6902 JSON Patch: what the stream's patch mode sends between two states.
///
/// `diff(from:to:)` makes the patch, `apply(to:)` applies one (all six operations, so tests and clients can check
/// any patch). A pure value type.
public struct JSONPatch: Sendable, Equatable {
    /// One patch operation.
    public enum Operation: Sendable, Equatable {
        case add(JSONPointer, JSONValue)
        case remove(JSONPointer)
        case replace(JSONPointer, JSONValue)
        case move(from: JSONPointer, to: JSONPointer)
        case copy(from: JSONPointer, to: JSONPointer)
        case test(JSONPointer, JSONValue)
    }

    /// The operations, applied in order.
    public var operations: [Operation]

    /// Creates a patch from operations.
    public init(_ operations: [Operation]) {
        self.operations = operations
    }

    /// A patch that turns `old` into `new`, using add, remove and replace.
    ///
    /// Objects are compared member by member, arrays element by element with additions and removals at the end
    /// (the shape of a growing list). When that would take more operations than half the new array's length, the
    /// array is replaced whole, which is then about as small.
    public static func diff(from old: JSONValue, to new: JSONValue) -> JSONPatch {
        var operations: [Operation] = []
        diff(old, new, at: JSONPointer(tokens: []), into: &operations)
        return JSONPatch(operations)
    }

    private static func diff(_ old: JSONValue, _ new: JSONValue, at path: JSONPointer, into ops: inout [Operation]) {
        guard old != new else { return }
        switch (old, new) {
        case (.object(let before), .object(let after)):
            for key in before.keys.sorted() where after[key] == nil {
                ops.append(.remove(path.appending(key)))
            }
            for key in after.keys.sorted() {
                if let previous = before[key] {
                    diff(previous, after[key]!, at: path.appending(key), into: &ops)
                } else {
                    ops.append(.add(path.appending(key), after[key]!))
                }
            }
        case (.array(let before), .array(let after)):
            var arrayOps: [Operation] = []
            let common = min(before.count, after.count)
            for index in 0..<common {
                diff(before[index], after[index], at: path.appending(String(index)), into: &arrayOps)
            }
            for index in common..<after.count {
                arrayOps.append(.add(path.appending(String(index)), after[index]))
            }
            for index in stride(from: before.count - 1, through: after.count, by: -1) {
                arrayOps.append(.remove(path.appending(String(index))))
            }
            if arrayOps.count > after.count / 2 + 1 {
                ops.append(.replace(path, new))
            } else {
                ops.append(contentsOf: arrayOps)
            }
        default:
            ops.append(.replace(path, new))
        }
    }

    /// Applies the patch to `document`. Throws, leaving nothing half-applied to the caller, when an operation does
    /// not apply (a missing path, a failed `test`, a move into its own child).
    public func apply(to document: JSONValue) throws(JSONPointerError) -> JSONValue {
        var result = document
        for operation in operations {
            switch operation {
            case .add(let path, let value):
                result = try Self.inserting(value, at: path.tokens[...], in: result, replacing: false)
            case .remove(let path):
                result = try Self.removing(at: path.tokens[...], in: result).document
            case .replace(let path, let value):
                guard path.resolve(in: result) != nil else { throw Self.missing(path) }
                result = try Self.inserting(value, at: path.tokens[...], in: result, replacing: true)
            case .move(let from, let to):
                guard from != to else { continue }
                if to.tokens.count > from.tokens.count, Array(to.tokens.prefix(from.tokens.count)) == from.tokens {
                    throw JSONPointerError(message: "cannot move \(from) into its own child \(to)")
                }
                let removed = try Self.removing(at: from.tokens[...], in: result)
                result = try Self.inserting(removed.value, at: to.tokens[...], in: removed.document, replacing: false)
            case .copy(let from, let to):
                guard let value = from.resolve(in: result) else { throw Self.missing(from) }
                result = try Self.inserting(value, at: to.tokens[...], in: result, replacing: false)
            case .test(let path, let value):
                guard path.resolve(in: result) == value else {
                    throw JSONPointerError(message: "test failed: \(path) is not the expected value")
                }
            }
        }
        return result
    }

    private static func missing(_ path: JSONPointer) -> JSONPointerError {
        JSONPointerError(message: "no value at \(path)")
    }

    private static func inserting(
        _ value: JSONValue,
        at tokens: ArraySlice<String>,
        in document: JSONValue,
        replacing: Bool
    ) throws(JSONPointerError) -> JSONValue {
        guard let token = tokens.first else { return value }
        let rest = tokens.dropFirst()
        switch document {
        case .object(var members):
            if rest.isEmpty {
                members[token] = value
            } else {
                guard let child = members[token] else { throw missing(JSONPointer(tokens: Array(tokens))) }
                members[token] = try inserting(value, at: rest, in: child, replacing: replacing)
            }
            return .object(members)
        case .array(var elements):
            if rest.isEmpty {
                if token == "-" && !replacing {
                    elements.append(value)
                } else if let index = JSONPointer.arrayIndex(token), index <= elements.count {
                    if replacing {
                        guard index < elements.count else { throw missing(JSONPointer(tokens: Array(tokens))) }
                        elements[index] = value
                    } else {
                        elements.insert(value, at: index)
                    }
                } else {
                    throw JSONPointerError(message: "\"\(token)\" is not an index of an array of \(elements.count)")
                }
            } else {
                guard let index = JSONPointer.arrayIndex(token), index < elements.count else {
                    throw missing(JSONPointer(tokens: Array(tokens)))
                }
                elements[index] = try inserting(value, at: rest, in: elements[index], replacing: replacing)
            }
            return .array(elements)
        default:
            throw JSONPointerError(message: "cannot add \"\(token)\" to a value that is neither object nor array")
        }
    }

    private static func removing(
        at tokens: ArraySlice<String>,
        in document: JSONValue
    ) throws(JSONPointerError) -> (document: JSONValue, value: JSONValue) {
        guard let token = tokens.first else {
            throw JSONPointerError(message: "cannot remove the whole document")
        }
        let rest = tokens.dropFirst()
        switch document {
        case .object(var members):
            guard let child = members[token] else { throw missing(JSONPointer(tokens: Array(tokens))) }
            if rest.isEmpty {
                members[token] = nil
                return (.object(members), child)
            }
            let result = try removing(at: rest, in: child)
            members[token] = result.document
            return (.object(members), result.value)
        case .array(var elements):
            guard let index = JSONPointer.arrayIndex(token), index < elements.count else {
                throw missing(JSONPointer(tokens: Array(tokens)))
            }
            if rest.isEmpty {
                let removed = elements.remove(at: index)
                return (.array(elements), removed)
            }
            let result = try removing(at: rest, in: elements[index])
            elements[index] = result.document
            return (.array(elements), result.value)
        default:
            throw missing(JSONPointer(tokens: Array(tokens)))
        }
    }
}
