extension JSONPatch {
    /// The patch as an RFC 6902 JSON array.
    public var json: JSONValue {
        .array(operations.map { $0.json })
    }

    /// Reads an RFC 6902 JSON array of operations.
    public init(json: JSONValue) throws(JSONPointerError) {
        guard case .array(let elements) = json else {
            throw JSONPointerError(message: "a JSON Patch is an array of operations")
        }
        var operations: [Operation] = []
        for element in elements {
            operations.append(try Operation(json: element))
        }
        self.init(operations)
    }
}

extension JSONPatch.Operation {
    /// The operation as an RFC 6902 JSON object.
    public var json: JSONValue {
        switch self {
        case .add(let path, let value): Self.object("add", path, ["value": value])
        case .remove(let path): Self.object("remove", path, [:])
        case .replace(let path, let value): Self.object("replace", path, ["value": value])
        case .move(let from, let to): Self.object("move", to, ["from": .string(from.description)])
        case .copy(let from, let to): Self.object("copy", to, ["from": .string(from.description)])
        case .test(let path, let value): Self.object("test", path, ["value": value])
        }
    }

    private static func object(_ op: String, _ path: JSONPointer, _ extra: [String: JSONValue]) -> JSONValue {
        var members = extra
        members["op"] = .string(op)
        members["path"] = .string(path.description)
        return .object(members)
    }

    /// Reads one RFC 6902 operation object.
    public init(json: JSONValue) throws(JSONPointerError) {
        guard case .object(let members) = json, case .string(let op)? = members["op"],
            case .string(let pathText)? = members["path"]
        else {
            throw JSONPointerError(message: "a JSON Patch operation is an object with string \"op\" and \"path\"")
        }
        let path = try JSONPointer(pathText)
        func value() throws(JSONPointerError) -> JSONValue {
            guard let value = members["value"] else {
                throw JSONPointerError(message: "\"\(op)\" needs a \"value\"")
            }
            return value
        }
        func from() throws(JSONPointerError) -> JSONPointer {
            guard case .string(let text)? = members["from"] else {
                throw JSONPointerError(message: "\"\(op)\" needs a string \"from\"")
            }
            return try JSONPointer(text)
        }
        switch op {
        case "add": self = .add(path, try value())
        case "remove": self = .remove(path)
        case "replace": self = .replace(path, try value())
        case "move": self = .move(from: try from(), to: path)
        case "copy": self = .copy(from: try from(), to: path)
        case "test": self = .test(path, try value())
        default: throw JSONPointerError(message: "unknown JSON Patch op \"\(op)\"")
        }
    }
}
