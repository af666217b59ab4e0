import SwiftDiagnostics
import SwiftSyntax

/// Every diagnostic the macros give, with its words. Errors fail the build where the system is written, instead of
/// at run time when a client posts.
enum MacroProblem: String {
    case eventNotEnum
    case effectOutsideEnumCase
    case duplicateWireName
    case unlabeledFields
    case unlabeledScalar
    case notCodable
    case fieldNamedType
    case schemaOnUnsupportedType
    case schemaEnumWithoutStrings
    case schemaCustomCoding
    case schemaUntypedProperty
    case schemaEnumWithPayloads
    case schemaTagOnStruct
    case schemaCodingOnEnum
    case flattenedNeedsStableCoding
    case flattenedOptional
    case flattenedOutsideProperty

    /// A diagnostic of this kind at `node`, with `message` when the default words need the case's details.
    func at(_ node: some SyntaxProtocol, _ message: String? = nil, fixIts: [FixIt] = []) -> Diagnostic {
        Diagnostic(node: Syntax(node), message: Message(problem: self, text: message ?? defaultText), fixIts: fixIts)
    }

    private var defaultText: String {
        switch self {
        case .eventNotEnum: "@FeedbackEvent applies to an enum of events"
        case .effectOutsideEnumCase: "@Effect marks a case of a @FeedbackEvent enum"
        case .duplicateWireName: "two cases have the same wire name"
        case .unlabeledFields: "a case with several fields needs a label for each: the labels are the JSON field names"
        case .unlabeledScalar:
            "an unlabeled payload's fields are written beside \"type\", so it must be an object; label this value"
        case .notCodable: "this payload cannot be written as JSON"
        case .fieldNamedType: "\"type\" is the event's tag on the wire; a field cannot have that name"
        case .schemaOnUnsupportedType:
            "@FeedbackSchema applies to a struct, or to an enum with String raw values; use @FeedbackEvent for events"
        case .schemaEnumWithoutStrings: "@FeedbackSchema derives an enum's schema from its String raw values"
        case .schemaCustomCoding:
            "this type writes its own init(from:) or encode(to:), so a schema derived from its properties would not "
                + "describe its JSON; conform it to JSONSchemaDescribing beside its coding instead"
        case .schemaUntypedProperty: "give this stored property a type annotation: its schema is derived from it"
        case .schemaEnumWithPayloads:
            "an enum with associated values is written as an object whose tag member names the case: "
                + "name that member with @FeedbackSchema(tag:)"
        case .schemaTagOnStruct: "tag: names the member that tags an enum's cases; a struct has none"
        case .schemaCodingOnEnum: "coding: applies to a struct; an enum's cases are tagged with @FeedbackSchema(tag:)"
        case .flattenedNeedsStableCoding:
            "synthesized Codable cannot write a member's fields beside the struct's own: use "
                + "@FeedbackSchema(coding: .stable) on this struct"
        case .flattenedOptional:
            "a flattened member cannot be optional: give it a default value, which an absent tag reads as"
        case .flattenedOutsideProperty:
            "@Flattened marks a stored property of a @FeedbackSchema(coding: .stable) struct"
        }
    }

    struct Message: DiagnosticMessage {
        let problem: MacroProblem
        let text: String
        var message: String { text }
        var diagnosticID: MessageID { MessageID(domain: "FeedbackMacros", id: problem.rawValue) }
        var severity: DiagnosticSeverity { .error }
    }

    struct Fix: FixItMessage {
        let message: String
        var fixItID: MessageID { MessageID(domain: "FeedbackMacros", id: message) }
    }
}
