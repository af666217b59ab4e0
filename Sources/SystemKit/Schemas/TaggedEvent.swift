public import FeedbackJSON

/// An event enum whose wire format `@FeedbackEvent` derived: tagged by `"type"`, with its types, the ones clients
/// may post, and a JSON Schema per case.
public protocol TaggedEvent: Codable, Sendable, JSONSchemaDescribing {
    /// Every event type, in declaration order.
    static var eventTypes: [String] { get }
    /// The types clients may post (the cases not marked `@Effect`).
    static var clientEventTypes: [String] { get }
    /// Every case's wire name, whether clients may post it, and its schema.
    static var eventCases: [EventCase] { get }
    /// Appends the event as the journal writes it (`FeedbackSystem.encodeEvent`: what `JSONEncoder()` writes, its
    /// members in the order they are encoded), or returns false, leaving `bytes` to be thrown away, when only the
    /// general way can promise those bytes. `@FeedbackEvent` writes it from the cases' names and fields, without an
    /// encoder; the default returns false.
    func appendPlainJSON(to bytes: inout [UInt8]) -> Bool
    /// The event its JSON object's members hold, read as `init(from:)` reads them, or nil where only `init(from:)`
    /// can say what they hold (or why they hold none). `@FeedbackEvent` reads the cases whose fields are `Int`,
    /// `String` or `Bool` (optional or not) without a decoder; the default reads none.
    init?(plainFields fields: EventFields)
}

extension TaggedEvent {
    /// False: `encodeEvent` encodes the event through its `Codable` conformance.
    public func appendPlainJSON(to bytes: inout [UInt8]) -> Bool { false }

    /// Nil: `decodeEvent` decodes the event through its `Codable` conformance.
    public init?(plainFields fields: EventFields) { return nil }
}

/// The members of an event's JSON object, as `@FeedbackEvent`'s `init?(plainFields:)` reads them: each accessor gives
/// what `init(from:)` would read, and nil where only it can say (a member of another kind, which it may convert or
/// refuse in its own words).
public struct EventFields {
    /// Where the members are: a parsed object's dictionary, or a posted body's bytes (`FlatJSONObject`).
    @usableFromInline
    enum Members {
        case tree([String: JSONValue])
        case flat(FlatJSONObject)

        @inlinable
        func member(_ name: String) -> JSONValue? {
            switch self {
            case .tree(let members): members.member(name)
            case .flat(let object): object.member(name)
            }
        }
    }

    @usableFromInline
    let members: Members

    @usableFromInline
    init(_ members: [String: JSONValue]) { self.members = .tree(members) }

    /// The members of a posted object read where its bytes lie: what the post's way decodes an event from, with no
    /// `JSONValue` made.
    public init(_ object: FlatJSONObject) { self.members = .flat(object) }

    /// The string `"type"`, if it is one.
    @inlinable
    public var type: String? {
        guard case .string(let type)? = members.member("type") else { return nil }
        return type
    }

    /// A required integer member: nil when it is absent or not an integer.
    @inlinable
    public func int(_ key: String) -> Int? { members.member(key).flatMap(Self.int) }

    /// A required string member.
    @inlinable
    public func string(_ key: String) -> String? { members.member(key).flatMap(Self.string) }

    /// A required Boolean member.
    @inlinable
    public func bool(_ key: String) -> Bool? { members.member(key).flatMap(Self.bool) }

    /// An optional integer member (`decodeIfPresent`): `.some(nil)` when absent or null, nil when of another kind.
    @inlinable
    public func optionalInt(_ key: String) -> Int?? { optional(key, Self.int) }

    /// An optional string member.
    @inlinable
    public func optionalString(_ key: String) -> String?? { optional(key, Self.string) }

    /// An optional Boolean member.
    @inlinable
    public func optionalBool(_ key: String) -> Bool?? { optional(key, Self.bool) }

    @inlinable
    func optional<Value>(_ key: String, _ read: (JSONValue) -> Value?) -> Value?? {
        switch members.member(key) {
        case nil, .null?: .some(nil)
        case let value?: read(value).map { .some($0) }
        }
    }

    @inlinable
    static func int(_ value: JSONValue) -> Int? {
        if case .int(let number) = value { Int(number) } else { nil }
    }

    @inlinable
    static func string(_ value: JSONValue) -> String? {
        if case .string(let text) = value { text } else { nil }
    }

    @inlinable
    static func bool(_ value: JSONValue) -> Bool? {
        if case .bool(let flag) = value { flag } else { nil }
    }
}

extension TaggedEvent {
    /// Any event of this enum: one of the cases' schemas (each fixes `"type"`, so exactly one matches).
    public static var jsonSchema: JSONSchema {
        JSONSchema(.object(["oneOf": .array(eventCases.map(\.schema.json))]))
    }
}

extension FeedbackSystem where Event: TaggedEvent {
    /// The cases not marked `@Effect`.
    public var clientEventTypes: [String] { Event.clientEventTypes }
}

/// One case of a tagged event (or `TaggedValue`): its wire name, whether clients may post it, and the JSON Schema of
/// its object.
public struct EventCase: Sendable {
    /// The tag's value (`"type"`'s for an event).
    public let type: String
    /// Whether the case is an effect's result, which clients may not post.
    public let isEffect: Bool
    /// The schema of the whole event object, `"type"` included.
    public let schema: JSONSchema

    /// A case whose fields are its labeled values (an optional one is not required: it is left out when nil), tagged
    /// by the member `tag`.
    public init(_ type: String, tag: String = "type", effect: Bool = false, fields: [JSONSchema.Property] = []) {
        self.init(
            type,
            tag: tag,
            effect: effect,
            properties: Dictionary(uniqueKeysWithValues: fields.map { ($0.name, $0.schema.json) }),
            required: fields.filter(\.required).map { .string($0.name) }
        )
    }

    /// A case whose one unlabeled value writes its own members beside the tag.
    public init(_ type: String, tag: String = "type", effect: Bool = false, flattening payload: JSONSchema) {
        let (properties, required) = payload.objectParts
        self.init(type, tag: tag, effect: effect, properties: properties, required: required)
    }

    private init(_ type: String, tag: String, effect: Bool, properties: [String: JSONValue], required: [JSONValue]) {
        self.type = type
        isEffect = effect
        var properties = properties
        properties[tag] = .object(["const": .string(type)])
        schema = JSONSchema(
            .object([
                "type": .string("object"),
                "properties": .object(properties),
                "required": .array([.string(tag)] + required),
            ])
        )
    }
}
