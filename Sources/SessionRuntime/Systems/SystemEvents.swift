import FeedbackJSON
import Foundation
import SystemKit

/// Checks posted JSON events against a system: tagged by a `"type"` the clients may send, with the fields the
/// system's `Event` needs. Every refusal says what was wrong and what is accepted.
enum SystemEvents {
    static func decode<System: FeedbackSystem>(
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
            return try event.decode(System.Event.self)
        } catch {
            throw APIError(
                .invalidEvent,
                "event \(index) of type \"\(type)\" does not fit \(system.name): \(Self.describe(error))",
                extra: accepted
            )
        }
    }

    /// A decoding error in a sentence: which field of `subject` ("the event", "the state"), and what was wrong with
    /// it, in the API's words (never a Swift type's name).
    static func describe(_ error: any Error, subject: String = "the event") -> String {
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
            return context.codingPath.isEmpty
                ? context.debugDescription : "\(path(context)): \(context.debugDescription)"
        @unknown default: return "\(subject) does not fit"
        }
    }
}
