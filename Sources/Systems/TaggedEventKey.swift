/// The coding keys of an event on the wire: `"type"` plus the case's fields.
struct TaggedEventKey: CodingKey, Hashable {
    let stringValue: String
    var intValue: Int? { nil }

    init(_ name: String) { stringValue = name }
    init?(stringValue: String) { self.stringValue = stringValue }
    init?(intValue: Int) { nil }

    static let type = TaggedEventKey("type")
}

extension KeyedDecodingContainer<TaggedEventKey> {
    /// The event's `"type"` tag.
    func eventType() throws -> String {
        try decode(String.self, forKey: .type)
    }

    /// The error for a tag this system does not know, naming the ones it does.
    func unknownType(_ type: String, known: [String]) -> DecodingError {
        DecodingError.dataCorruptedError(
            forKey: .type,
            in: self,
            debugDescription: "unknown event type \"\(type)\"; known types: \(known.joined(separator: ", "))"
        )
    }
}
