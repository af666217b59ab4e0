/// Where a JSON value first departs from a system's published JSON Schema, in the client's terms: the JSON Pointer
/// of the member, what the schema expects there in JSON words (`one of "human", "machine"`, `an integer`) and what
/// was sent. What a refused state or event answers with; it never names a Swift type.
///
/// The schemas are the macros' (`JSONSchema`): objects with `properties` and `required`, arrays with `items`,
/// maps with `additionalProperties`, `type`, `enum`, `const`, `anyOf`, `oneOf` and `allOf`. Other keywords are not checked.
package struct SchemaMismatch: Equatable, Sendable {
    /// The JSON Pointer of the member that does not fit ("" for the whole value).
    package let pointer: String
    /// What the schema expects there, in words.
    package let expected: String
    /// The JSON text that was sent there (shortened), or `nothing` for a missing member.
    package let sent: String

    package init(pointer: String, expected: String, sent: String) {
        self.pointer = pointer
        self.expected = expected
        self.sent = sent
    }

    /// The first mismatch of `value` against `schema`, nil when it fits.
    package static func find(_ value: JSONValue, in schema: JSONValue) -> SchemaMismatch? {
        find(value, schema, at: JSONPointer(tokens: []))
    }

    /// The problem's members: `pointer`, `expected`, `sent`.
    package var members: [String: JSONValue] {
        ["pointer": .string(pointer), "expected": .string(expected), "sent": .string(sent)]
    }

    /// "/holder should be one of "human", "machine"; sent "purple"".
    package var sentence: String {
        "\(pointer.isEmpty ? "the value" : pointer) should be \(expected); sent \(sent)"
    }

    private static func find(_ value: JSONValue, _ schema: JSONValue, at pointer: JSONPointer) -> SchemaMismatch? {
        guard case .object(let keywords) = schema else { return nil }
        func mismatch() -> SchemaMismatch {
            SchemaMismatch(pointer: pointer.description, expected: describe(schema), sent: text(of: value))
        }
        for key in ["anyOf", "oneOf"] {
            guard case .array(let alternatives)? = keywords[key] else { continue }
            let fitting = alternatives.filter { find(value, $0, at: pointer) == nil }
            if fitting.isEmpty {
                // The alternative whose tag (a member fixed by `const`) the value carries says what is wrong in it.
                let tagged = alternatives.filter { fixedMembersMatch(value, $0) }
                if tagged.count == 1, let inner = find(value, tagged[0], at: pointer) { return inner }
                // One alternative of the value's own kind says more than all of them: `/next/url should be a string`.
                let sameKind = alternatives.filter { accepts(kind(of: value), $0) }
                if sameKind.count == 1, let inner = find(value, sameKind[0], at: pointer) { return inner }
                return mismatch()
            }
        }
        if case .string(let type)? = keywords["type"], !accepts(kind(of: value), type: type) { return mismatch() }
        if case .array(let allowed)? = keywords["enum"], !allowed.contains(value) { return mismatch() }
        if let constant = keywords["const"], constant != value { return mismatch() }
        switch value {
        case .object(let members):
            if case .array(let required)? = keywords["required"] {
                for case .string(let name) in required where members[name] == nil {
                    let property = propertySchema(name, keywords)
                    return SchemaMismatch(
                        pointer: pointer.appending(name).description,
                        expected: property.map(describe) ?? "a value",
                        sent: "nothing"
                    )
                }
            }
            for (name, member) in members.sorted(by: { $0.key < $1.key }) {
                guard let property = propertySchema(name, keywords) else { continue }
                if let found = find(member, property, at: pointer.appending(name)) { return found }
            }
        case .array(let elements):
            guard let items = keywords["items"] else { break }
            for (index, element) in elements.enumerated() {
                if let found = find(element, items, at: pointer.appending(String(index))) { return found }
            }
        default: break
        }
        // A flattened tagged value's cases, checked once the members themselves fit.
        if case .array(let parts)? = keywords["allOf"] {
            for part in parts {
                if let found = find(value, part, at: pointer) { return found }
            }
        }
        return nil
    }

    /// Whether `value` has every member that `schema` fixes with `const` (and at least one), with that value.
    private static func fixedMembersMatch(_ value: JSONValue, _ schema: JSONValue) -> Bool {
        guard case .object(let members) = value, case .object(let keywords) = schema,
            case .object(let properties)? = keywords["properties"]
        else { return false }
        var fixed = 0
        for (name, property) in properties {
            guard case .object(let inner) = property, let constant = inner["const"] else { continue }
            guard members[name] == constant else { return false }
            fixed += 1
        }
        return fixed > 0
    }

    private static func propertySchema(_ name: String, _ keywords: [String: JSONValue]) -> JSONValue? {
        if case .object(let properties)? = keywords["properties"], let property = properties[name] { return property }
        if let additional = keywords["additionalProperties"], case .object = additional { return additional }
        return nil
    }

    /// What a schema expects, in words.
    static func describe(_ schema: JSONValue) -> String {
        guard case .object(let keywords) = schema else { return "a value" }
        if case .array(let values)? = keywords["enum"] {
            return values.count == 1 ? text(of: values[0]) : "one of " + values.map(text(of:)).joined(separator: ", ")
        }
        if let constant = keywords["const"] { return text(of: constant) }
        for key in ["anyOf", "oneOf"] {
            if case .array(let alternatives)? = keywords[key] {
                return alternatives.map(describe).joined(separator: " or ")
            }
        }
        guard case .string(let type)? = keywords["type"] else { return "a value" }
        switch type {
        case "integer": return "an integer"
        case "number": return "a number"
        case "string": return "a string"
        case "boolean": return "true or false"
        case "null": return "null"
        case "array": return "an array"
        case "object":
            if case .array(let required)? = keywords["required"], !required.isEmpty {
                let names = required.compactMap { value -> String? in
                    if case .string(let name) = value { return "\"\(name)\"" }
                    return nil
                }
                return "an object with \(names.joined(separator: ", "))"
            }
            return "an object"
        default: return "a value"
        }
    }

    /// The JSON text of `value`, shortened to about 80 bytes.
    package static func text(of value: JSONValue) -> String {
        let bytes = value.serialized()
        guard bytes.count > 80 else { return String(decoding: bytes, as: UTF8.self) }
        return String(decoding: bytes.prefix(77), as: UTF8.self) + "..."
    }

    private static func kind(of value: JSONValue) -> String {
        switch value {
        case .null: "null"
        case .bool: "boolean"
        case .int: "integer"
        case .double: "number"
        case .string: "string"
        case .array: "array"
        case .object: "object"
        }
    }

    private static func accepts(_ kind: String, type: String) -> Bool {
        kind == type || (type == "number" && kind == "integer")
    }

    private static func accepts(_ kind: String, _ schema: JSONValue) -> Bool {
        guard case .object(let keywords) = schema, case .string(let type)? = keywords["type"] else { return true }
        return accepts(kind, type: type)
    }
}
