public import FeedbackJSON

/// One step of a system's schema: turns the JSON of a state and of an event written at version `from` into the JSON of
/// version `from + 1`. Migrations are pure functions of JSON: they run when a journaled session is loaded, when
/// `feedback-host verify` replays it, and when a fixture of an older version is replayed.
///
/// A value type: safe to share.
public struct SchemaMigration: Sendable {
    /// The version this step reads; it writes `from + 1`.
    public let from: Int
    /// The state at version `from` to the state at `from + 1`.
    public let state: @Sendable (JSONValue) throws(MigrationFailure) -> JSONValue
    /// An event at version `from` (an object tagged by `"type"`) to the event at `from + 1`.
    public let event: @Sendable (JSONValue) throws(MigrationFailure) -> JSONValue

    /// A step from `from` to `from + 1`; a part left out is kept as it is.
    public init(
        from: Int,
        state: @escaping @Sendable (JSONValue) throws(MigrationFailure) -> JSONValue = { $0 },
        event: @escaping @Sendable (JSONValue) throws(MigrationFailure) -> JSONValue = { $0 }
    ) {
        self.from = from
        self.state = state
        self.event = event
    }
}

/// Why a migration could not turn a value into the next version: where (a JSON Pointer into the value it was given)
/// and what was wrong there.
public struct MigrationFailure: Error, Sendable, Equatable, CustomStringConvertible {
    /// The JSON Pointer (RFC 6901) of the member that did not fit, `""` for the whole value.
    public var path: String
    /// What was wrong, in words.
    public var message: String

    /// Creates a failure at `path`.
    public init(path: String, _ message: String) {
        self.path = path
        self.message = message
    }

    public var description: String { "at \(path.isEmpty ? "the root" : path): \(message)" }
}

extension JSONValue {
    /// The object at `pointer` (`""` for this value) with its member `old` renamed `new`; a missing `old` is fine
    /// (nothing to rename), a value at `pointer` that is not an object fails there.
    public func renamingMember(
        _ old: String,
        to new: String,
        at pointer: String = ""
    ) throws(MigrationFailure) -> JSONValue {
        try updating(at: pointer) { value throws(MigrationFailure) in
            guard case .object(var members) = value else {
                throw MigrationFailure(path: pointer, "expected an object with \"\(old)\", found \(value.kindName)")
            }
            if let moved = members.removeValue(forKey: old) { members[new] = moved }
            return .object(members)
        }
    }

    /// This value with the value at `pointer` replaced by `transform`'s result; fails when nothing is there.
    public func updating(
        at pointer: String,
        _ transform: (JSONValue) throws(MigrationFailure) -> JSONValue
    ) throws(MigrationFailure) -> JSONValue {
        let tokens: [String]
        do {
            tokens = try JSONPointer(pointer).tokens
        } catch {
            throw MigrationFailure(path: pointer, "not a JSON Pointer: \(error.message)")
        }
        return try Self.updating(self, tokens[...], pointer: pointer, transform)
    }

    private static func updating(
        _ value: JSONValue,
        _ tokens: ArraySlice<String>,
        pointer: String,
        _ transform: (JSONValue) throws(MigrationFailure) -> JSONValue
    ) throws(MigrationFailure) -> JSONValue {
        guard let token = tokens.first else { return try transform(value) }
        switch value {
        case .object(var members):
            guard let child = members[token] else { throw MigrationFailure(path: pointer, "no member \"\(token)\"") }
            members[token] = try updating(child, tokens.dropFirst(), pointer: pointer, transform)
            return .object(members)
        case .array(var elements):
            guard let index = Int(token), elements.indices.contains(index) else {
                throw MigrationFailure(path: pointer, "no element \(token)")
            }
            elements[index] = try updating(elements[index], tokens.dropFirst(), pointer: pointer, transform)
            return .array(elements)
        default:
            throw MigrationFailure(path: pointer, "\"\(token)\" is inside \(value.kindName)")
        }
    }

    /// The event's `"type"`, nil when it has none.
    public var eventType: String? {
        if case .object(let members) = self, case .string(let type)? = members["type"] { return type }
        return nil
    }

    var kindName: String {
        switch self {
        case .null: "null"
        case .bool: "a boolean"
        case .int, .double: "a number"
        case .string: "a string"
        case .array: "an array"
        case .object: "an object"
        }
    }
}
