/// Derives an event enum's wire format and schemas: `Codable` tagged by `"type"` (`{"type":"add","amount":5}`: the
/// labels are the field names; an unlabeled single payload, which must encode as an object, has its own fields
/// written beside `"type"`; an optional field is left out when nil), `eventTypes`, `clientEventTypes` (every case not
/// marked `@Effect`) and each case's JSON Schema (`eventCases`), and conforms the enum to `TaggedEvent`.
///
/// Two cases with one wire name, several unlabeled fields, an unlabeled number, string or array, a field named
/// `type` and a payload that has no JSON (a function, a tuple, an existential) fail the build where they are written.
@attached(
    member,
    names: named(init(from:)),
    named(encode(to:)),
    named(eventTypes),
    named(clientEventTypes),
    named(eventCases)
)
@attached(extension, conformances: TaggedEvent)
public macro FeedbackEvent() = #externalMacro(module: "FeedbackMacros", type: "FeedbackEventMacro")

/// Marks a case of a `@FeedbackEvent` enum as an effect's result: feedbacks send it, clients may not post it.
@attached(peer)
public macro Effect() = #externalMacro(module: "FeedbackMacros", type: "EffectMacro")

/// Derives the JSON Schema of a type that uses synthesized `Codable`: a struct (its stored properties; optionals may
/// be left out or null) or an enum with String raw values, and conforms it to `JSONSchemaDescribing`. Put it on a
/// system's `State` and on every type of its own that the state or an event holds.
@attached(member, names: named(jsonSchema))
@attached(extension, conformances: JSONSchemaDescribing)
public macro FeedbackSchema() = #externalMacro(module: "FeedbackMacros", type: "FeedbackSchemaMacro")
