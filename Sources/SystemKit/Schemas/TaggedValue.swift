import FeedbackJSON

/// An enum written as an object tagged by one of its members, whose coding and schema `@FeedbackSchema(tag:)`
/// derived: `{"status":"failed","message":"…"}`.
public protocol TaggedValue: Codable, Sendable, JSONSchemaDescribing {
    /// The member naming the case (`status`).
    static var tagKey: String { get }
    /// Every case's tag and the JSON Schema of its object, tag included.
    static var taggedCases: [EventCase] { get }
}

extension TaggedValue {
    /// One of the cases' schemas (each fixes the tag, so exactly one matches).
    public static var jsonSchema: JSONSchema {
        JSONSchema(.object(["oneOf": .array(taggedCases.map(\.schema.json))]))
    }

    /// The value `decoder` holds beside other members, or `fallback` when its tag is absent or null: how a
    /// `@Flattened` member with a default value reads.
    public static func decode(from decoder: any Decoder, default fallback: Self) throws -> Self {
        let container = try decoder.container(keyedBy: TaggedEventKey.self)
        let key = TaggedEventKey(tagKey)
        guard container.contains(key), try !container.decodeNil(forKey: key) else { return fallback }
        return try Self(from: decoder)
    }
}

extension JSONSchema {
    /// This object schema with a `TaggedValue`'s members beside its own: the tag among the properties (one of the
    /// cases' tags) and, under `allOf`, the cases' own members. `defaulted`: the tag may also be left out or null,
    /// and then no case's members are read (the value reads as its default).
    public func flattening<Value: TaggedValue>(_ type: Value.Type, defaulted: Bool) -> JSONSchema {
        guard case .object(var keywords) = json, case .object(var properties)? = keywords["properties"],
            case .array(var required)? = keywords["required"]
        else { return self }
        let tag = Value.tagKey
        let tags = JSONSchema.strings(Value.taggedCases.map(\.type)).json
        let null = JSONSchema.type("null").json
        properties[tag] = defaulted ? .object(["anyOf": .array([tags, null])]) : tags
        keywords["properties"] = .object(properties)
        if !defaulted { required.append(.string(tag)) }
        keywords["required"] = .array(required)
        // Each case fixes the tag with `const` and requires it, so at most one fits.
        var cases = Value.taggedCases.map(\.schema.json)
        if defaulted { cases.insert(.object(["properties": .object([tag: null])]), at: 0) }
        var all: [JSONValue] = []
        if case .array(let existing)? = keywords["allOf"] { all = existing }
        all.append(.object(["anyOf": .array(cases)]))
        keywords["allOf"] = .array(all)
        return JSONSchema(.object(keywords))
    }
}
