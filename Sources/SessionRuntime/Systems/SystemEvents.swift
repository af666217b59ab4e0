public import FeedbackJSON
import Foundation
public import SystemKit

/// Checks posted JSON events against a system: tagged by a `"type"` the clients may send, with the fields the
/// system's `Event` needs. Every refusal says what was wrong and what is accepted.
@usableFromInline
package enum SystemEvents {
    /// The `index`th event of `events`, or the refusal that says why it is not one the system's clients may post.
    /// Inlinable, so that it runs specialised in a session's post path (`SessionPaths`): a valid event pays for one
    /// look at its type and its decode, a flat body's from its members where the system reads them without a decoder
    /// (`FeedbackSystem.decodeEvent(plain:)`, no `JSONValue` made); any other, and every refusal (spelled out by
    /// `checked`), through its JSON value.
    @inlinable
    static func decode<System: FeedbackSystem>(
        _ events: PostedEvents,
        at index: Int,
        of system: System
    ) throws(APIError) -> System.Event {
        let event: JSONValue
        switch events.form {
        case .values(let values):
            event = values[index]
        case .flat(let object):
            if object.member("type", isOneOf: system.clientEventTypes),
                let decoded = System.decodeEvent(plain: EventFields(object))
            {
                return decoded
            }
            event = object.value
        }
        if case .object(let members) = event, case .string(let type)? = members.member("type"),
            system.clientEventTypes.contains(type), let decoded = try? System.decodeEvent(event)
        {
            return decoded
        }
        throw refusal(event, at: index, of: system)
    }

    /// Why `event` is not one `system`'s clients may post.
    @usableFromInline
    static func refusal<System: FeedbackSystem>(_ event: JSONValue, at index: Int, of system: System) -> APIError {
        do throws(APIError) {
            _ = try checked(event, at: index, of: system)
            return APIError(.invalidEvent, "event \(index) does not fit \(system.name)")
        } catch {
            return error
        }
    }

    /// `decode`, each check in turn with the refusal it makes.
    static func checked<System: FeedbackSystem>(
        _ event: JSONValue,
        at index: Int,
        of system: System
    ) throws(APIError) -> System.Event {
        // The accepted types are spelled out only on the error paths: a valid event pays for none of it.
        var accepted: [String: JSONValue] { ["accepted": .array(system.clientEventTypes.map { .string($0) })] }
        var acceptedList: String { system.clientEventTypes.joined(separator: ", ") }
        guard case .object(let members) = event else {
            throw APIError(.invalidEvent, "event \(index) is not a JSON object; send {\"type\": …}", extra: accepted)
        }
        guard case .string(let type)? = members["type"] else {
            throw APIError(
                .invalidEvent,
                "event \(index) has no string \"type\"; \(system.name) accepts: \(acceptedList)",
                extra: accepted
            )
        }
        guard system.clientEventTypes.contains(type) else {
            let internalType = (try? event.decode(System.Event.self)) != nil
            throw APIError(
                internalType ? .eventNotAccepted : .invalidEvent,
                internalType
                    ? "event \(index) of type \"\(type)\" is internal to \(system.name) and cannot be posted; "
                        + "clients may post: \(acceptedList)"
                    : "\(system.name) has no event of type \"\(type)\"; clients may post: \(acceptedList)",
                extra: accepted
            )
        }
        do {
            return try System.decodeEvent(event)
        } catch {
            let mismatch = Self.mismatch(event, error, schema: caseSchema(type, of: System.Event.self))
            var extra = accepted
            extra.merge(mismatch.members) { _, new in new }
            throw APIError(
                .invalidEvent,
                "event \(index) of type \"\(type)\" does not fit \(system.name): \(mismatch.sentence)",
                extra: extra
            )
        }
    }

    /// The schema of the case tagged `type`, when `@FeedbackEvent` derived the event's coding.
    static func caseSchema<Event>(_ type: String, of event: Event.Type) -> JSONValue? {
        guard let tagged = event as? any TaggedEvent.Type else { return nil }
        return tagged.eventCases.first { $0.type == type }?.schema.json
    }

    /// Where and how `value`, which did not decode with `error`, departs from what was expected, in JSON terms: from
    /// the published schema when there is one, else from the decoding error's path (never its text, which names
    /// Swift types).
    static func mismatch(_ value: JSONValue, _ error: any Error, schema: JSONValue?) -> SchemaMismatch {
        if let schema, let found = SchemaMismatch.find(value, in: schema) { return found }
        guard let error = error as? DecodingError else {
            return SchemaMismatch(pointer: "", expected: "a value of this system", sent: SchemaMismatch.text(of: value))
        }
        func pointer(_ path: [any CodingKey]) -> JSONPointer {
            JSONPointer(tokens: path.map { $0.intValue.map(String.init) ?? $0.stringValue })
        }
        func sent(_ at: JSONPointer) -> String { at.resolve(in: value).map(SchemaMismatch.text(of:)) ?? "nothing" }
        switch error {
        case .keyNotFound(let key, let context):
            let at = pointer(context.codingPath + [key])
            return SchemaMismatch(pointer: at.description, expected: "a value", sent: "nothing")
        case .typeMismatch(let type, let context), .valueNotFound(let type, let context):
            let at = pointer(context.codingPath)
            return SchemaMismatch(pointer: at.description, expected: JSONValue.kind(of: type), sent: sent(at))
        case .dataCorrupted(let context):
            let at = pointer(context.codingPath)
            return SchemaMismatch(pointer: at.description, expected: "another value", sent: sent(at))
        @unknown default:
            return SchemaMismatch(pointer: "", expected: "a value of this system", sent: SchemaMismatch.text(of: value))
        }
    }

    /// A decoding error in a sentence: which field of `subject` ("the event", "the state"), and what was wrong with
    /// it, in the API's words (never a Swift type's name).
    package static func describe(_ error: any Error, subject: String = "the event") -> String {
        if let syntax = error as? JSONSyntaxError { return "\(subject) is not JSON: \(syntax)" }
        guard let error = error as? DecodingError else { return "\(subject) does not fit" }
        func path(_ context: DecodingError.Context) -> String {
            let keys = context.codingPath.map { $0.intValue.map(String.init) ?? $0.stringValue }
            return keys.isEmpty ? subject : "field \"\(keys.joined(separator: "."))\""
        }
        switch error {
        case .keyNotFound(let key, let context):
            let parent = context.codingPath.map { $0.intValue.map(String.init) ?? $0.stringValue }
            let name = (parent + [key.stringValue]).joined(separator: ".")
            return "field \"\(name)\" is missing"
        case .typeMismatch(let type, let context): return "\(path(context)) should be \(JSONValue.kind(of: type))"
        case .valueNotFound(let type, let context):
            return "\(path(context)) should be \(JSONValue.kind(of: type)), not null"
        case .dataCorrupted(let context):
            // The decoder's own text names Swift types ("Cannot initialize Holder from ..."): only ours is kept.
            let text =
                context.debugDescription.hasPrefix("unknown event type")
                ? context.debugDescription : "holds a value that does not fit"
            return context.codingPath.isEmpty ? "\(subject) \(text)" : "\(path(context)) \(text)"
        @unknown default: return "\(subject) does not fit"
        }
    }
}
