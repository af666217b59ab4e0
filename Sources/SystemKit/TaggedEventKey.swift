/// The coding keys of an event on the wire: `"type"` plus the case's fields.
///
/// A system's `Event` writes its `Codable` conformance with these keys: `{"type": "add", "amount": 2}`.
public struct TaggedEventKey: CodingKey, Hashable, Sendable {
    /// The field's name.
    public let stringValue: String
    /// Events are objects: no integer keys.
    public var intValue: Int? { nil }

    /// The key of the field `name`.
    public init(_ name: String) { stringValue = name }
    /// The key of the field `stringValue`.
    public init?(stringValue: String) { self.stringValue = stringValue }
    /// Never: events are objects.
    public init?(intValue: Int) { nil }

    /// The tag naming the event's case.
    public static let type = TaggedEventKey("type")
}

extension KeyedDecodingContainer<TaggedEventKey> {
    /// The event's `"type"` tag.
    public func eventType() throws -> String {
        try decode(String.self, forKey: .type)
    }

    /// The value's tag, the string member `key` (a `TaggedValue`'s `tagKey`).
    public func tag(_ key: String) throws -> String {
        try decode(String.self, forKey: TaggedEventKey(key))
    }

    /// The error for a value of the tag `key` that the type does not know, naming the ones it does.
    public func unknownTag(_ value: String, of key: String, known: [String]) -> DecodingError {
        DecodingError.dataCorruptedError(
            forKey: TaggedEventKey(key),
            in: self,
            debugDescription: "unknown \(key) \"\(value)\"; known: \(known.joined(separator: ", "))"
        )
    }

    /// The error for a tag this system does not know, naming the ones it does.
    public func unknownType(_ type: String, known: [String]) -> DecodingError {
        DecodingError.dataCorruptedError(
            forKey: .type,
            in: self,
            debugDescription: "unknown event type \"\(type)\"; known types: \(known.joined(separator: ", "))"
        )
    }
}
