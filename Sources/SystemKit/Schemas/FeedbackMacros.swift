/// Derives an event enum's wire format and schemas: `Codable` tagged by `"type"` (`{"type":"add","amount":5}`: the
/// labels are the field names; an unlabeled single payload, which must encode as an object, has its own fields
/// written beside `"type"`; an optional field is left out when nil, a field with a default value may be left out),
/// `eventTypes`, `clientEventTypes` (every case not marked `@Effect`) and each case's JSON Schema (`eventCases`), and
/// conforms the enum to `TaggedEvent`. It also writes an event as the journal keeps it (`appendPlainJSON`) and reads
/// one of plain fields (`init?(plainFields:)`) without an encoder or decoder: the same bytes and events as its
/// `Codable`, faster on every post.
///
/// Two cases with one wire name, several unlabeled fields, an unlabeled number, string or array, a field named
/// `type` and a payload that has no JSON (a function, a tuple, an existential) fail the build where they are written.
@attached(
    member,
    names: named(init(from:)),
    named(encode(to:)),
    named(eventTypes),
    named(clientEventTypes),
    named(eventCases),
    named(appendPlainJSON(to:)),
    named(init(plainFields:))
)
@attached(extension, conformances: TaggedEvent)
public macro FeedbackEvent() = #externalMacro(module: "FeedbackMacros", type: "FeedbackEventMacro")

/// Marks a case of a `@FeedbackEvent` enum as an effect's result: feedbacks send it, clients may not post it.
@attached(peer)
public macro Effect() = #externalMacro(module: "FeedbackMacros", type: "MarkerMacro")

/// Derives the JSON Schema of a type that uses synthesized `Codable`: a struct (its stored properties; optionals may
/// be left out or null) or an enum with String raw values, and conforms it to `JSONSchemaDescribing`. Put it on a
/// system's `State` and on every type of its own that the state or an event holds. A generic struct describes its
/// JSON when its type parameters do (`where T: JSONSchemaDescribing`). A struct also writes its JSON as the host writes
/// a state (`appendStateJSON`: sorted keys, the bytes its synthesized `Codable` gives, without an encoder), so keep
/// its coding synthesized: an `encode(to:)` in an extension, which the macro cannot see, would not be used.
@attached(member, names: named(jsonSchema), named(appendStateJSON(to:)))
@attached(extension, conformances: JSONSchemaDescribing, StateJSONWritable, names: named(jsonSchema))
public macro FeedbackSchema() = #externalMacro(module: "FeedbackMacros", type: "FeedbackSchemaMacro")

/// Derives an enum's coding and schema as an object tagged by its member `tag`, as events are by `"type"`:
/// `@FeedbackSchema(tag: "status")` writes `case failed(message: String)` as `{"status":"failed","message":"…"}`
/// (labels as field names, an optional field left out when nil, a field with a default value may be left out, an
/// unlabeled single payload's own fields beside the tag). Conforms it to `TaggedValue`. A struct of
/// `@FeedbackSchema(coding: .stable)` may write it beside its own members (`@Flattened`).
@attached(member, names: named(init(from:)), named(encode(to:)), named(tagKey), named(taggedCases))
@attached(extension, conformances: TaggedValue)
public macro FeedbackSchema(tag: String) = #externalMacro(module: "FeedbackMacros", type: "FeedbackSchemaMacro")

/// Derives a struct's coding and schema in the way `coding` names (`.stable`: every member written, nil as null; a
/// member left out reads as its default value; `@Flattened` members written beside the others) and conforms it to
/// `Codable` and `JSONSchemaDescribing`.
@attached(member, names: named(jsonSchema), named(init(from:)), named(encode(to:)), named(appendStateJSON(to:)))
@attached(extension, conformances: Codable, JSONSchemaDescribing, StateJSONWritable, names: named(jsonSchema))
public macro FeedbackSchema(coding: SchemaCoding) =
    #externalMacro(module: "FeedbackMacros", type: "FeedbackSchemaMacro")

/// Marks a stored property of a `@FeedbackSchema(coding: .stable)` struct whose value, a `@FeedbackSchema(tag:)`
/// enum, is written beside the struct's own members (`"status":"failed","message":"…"` rather than a nested object).
/// With a default value the tag may be left out, and then reads as that default. It expands to nothing itself.
@attached(peer)
public macro Flattened() = #externalMacro(module: "FeedbackMacros", type: "MarkerMacro")

/// How `@FeedbackSchema(coding:)` writes and reads a struct.
public enum SchemaCoding: Sendable {
    /// Every member is written, an absent optional as `null`, so the JSON's keys never come and go (what a state's
    /// patches and `?select=` want); a member left out reads as its default value (an optional without one as nil),
    /// so a client may send only what differs from the defaults; `@Flattened` members are written beside the others.
    case stable
}
