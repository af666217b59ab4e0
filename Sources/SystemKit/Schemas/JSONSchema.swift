public import FeedbackJSON

/// A JSON Schema (draft 2020-12) of a value's JSON, as the macros derive it: what `GET /v1/systems` publishes and
/// what a posted state or event is checked against before a client is told what did not fit.
public struct JSONSchema: Sendable, Hashable {
    /// The schema itself.
    public var json: JSONValue

    /// The schema `json`.
    public init(_ json: JSONValue) { self.json = json }

    /// The schema as a document of its own: with `$schema` naming draft 2020-12.
    public var document: JSONValue {
        guard case .object(var members) = json else { return json }
        members["$schema"] = .string("https://json-schema.org/draft/2020-12/schema")
        return .object(members)
    }

    /// The schema of `type`.
    public static func of<T: JSONSchemaDescribing>(_ type: T.Type) -> JSONSchema { T.jsonSchema }

    /// Any JSON value.
    public static let any = JSONSchema(.object([:]))

    /// A JSON type by its name (`integer`, `string`, ...).
    public static func type(_ name: String) -> JSONSchema { JSONSchema(.object(["type": .string(name)])) }

    /// An integer in `range`.
    public static func integer(_ range: ClosedRange<Int64>) -> JSONSchema {
        JSONSchema(
            .object([
                "type": .string("integer"), "minimum": .int(range.lowerBound), "maximum": .int(range.upperBound),
            ])
        )
    }

    /// One of these strings.
    public static func strings(_ values: [String]) -> JSONSchema {
        JSONSchema(.object(["type": .string("string"), "enum": .array(values.map(JSONValue.string))]))
    }

    /// An object with these members; the required ones must be present.
    public static func object(_ properties: [Property]) -> JSONSchema {
        var members: [String: JSONValue] = [:]
        for property in properties { members[property.name] = property.schema.json }
        return JSONSchema(
            .object([
                "type": .string("object"),
                "properties": .object(members),
                "required": .array(properties.filter(\.required).map { .string($0.name) }),
            ])
        )
    }

    /// One member of an object's schema.
    public struct Property: Sendable {
        /// The member's name in JSON.
        public var name: String
        /// Its value's schema.
        public var schema: JSONSchema
        /// Whether it must be present.
        public var required: Bool

        /// A member `name` of schema `schema`.
        public init(_ name: String, _ schema: JSONSchema, required: Bool) {
            self.name = name
            self.schema = schema
            self.required = required
        }
    }

    /// The members of an object schema, in the order of its `required` list first; empty for any other schema.
    var objectParts: (properties: [String: JSONValue], required: [JSONValue]) {
        guard case .object(let members) = json else { return ([:], []) }
        guard case .object(let properties)? = members["properties"] else { return ([:], []) }
        guard case .array(let required)? = members["required"] else { return (properties, []) }
        return (properties, required)
    }
}
