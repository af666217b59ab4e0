import SwiftDiagnostics
public import SwiftSyntax
import SwiftSyntaxBuilder
public import SwiftSyntaxMacros

/// `@FeedbackEvent` on a system's `Event` enum derives its wire format (`Codable` tagged by `"type"`, labels as
/// field names, an unlabeled single payload's own fields beside `"type"`), its types, the ones clients may post
/// (every case not marked `@Effect`) and each case's JSON Schema, and conforms it to `TaggedEvent`.
public struct FeedbackEventMacro: MemberMacro, ExtensionMacro {
    public static func expansion(
        of node: AttributeSyntax,
        providingMembersOf declaration: some DeclGroupSyntax,
        conformingTo protocols: [TypeSyntax],
        in context: some MacroExpansionContext
    ) throws -> [DeclSyntax] {
        guard let enumDecl = declaration.as(EnumDeclSyntax.self) else {
            context.diagnose(MacroProblem.eventNotEnum.at(node))
            return []
        }
        let (cases, problems) = EventCase.read(enumDecl)
        guard problems.isEmpty else {
            problems.forEach(context.diagnose)
            return []
        }
        let access = declaration.memberAccess
        return [
            typesMember(access, "eventTypes", cases.map(\.name), "Every event type, in declaration order."),
            typesMember(
                access,
                "clientEventTypes",
                cases.filter { !$0.isEffect }.map(\.name),
                "The types clients may post: every case not marked @Effect."
            ),
            casesMember(access, cases),
            decoder(access, cases),
            encoder(access, cases),
        ]
    }

    public static func expansion(
        of node: AttributeSyntax,
        attachedTo declaration: some DeclGroupSyntax,
        providingExtensionsOf type: some TypeSyntaxProtocol,
        conformingTo protocols: [TypeSyntax],
        in context: some MacroExpansionContext
    ) throws -> [ExtensionDeclSyntax] {
        // The member expansion reports the problems; a conformance without its members would only add noise.
        guard let enumDecl = declaration.as(EnumDeclSyntax.self), EventCase.read(enumDecl).problems.isEmpty,
            !protocols.isEmpty
        else { return [] }
        return [try ExtensionDeclSyntax("extension \(type.trimmed): SystemKit.TaggedEvent {}")]
    }

    private static func typesMember(_ access: String, _ name: String, _ types: [String], _ doc: String) -> DeclSyntax {
        let list = types.map { "\"\($0)\"" }.joined(separator: ", ")
        return "/// \(raw: doc)\n\(raw: access)static var \(raw: name): [String] { [\(raw: list)] }"
    }

    private static func casesMember(_ access: String, _ cases: [EventCase]) -> DeclSyntax {
        let entries = cases.map { eventCase -> String in
            let effect = eventCase.isEffect ? ", effect: true" : ""
            switch eventCase.payload {
            case .none:
                return "SystemKit.EventCase(\"\(eventCase.name)\"\(effect))"
            case .fields(let fields):
                let list = fields.map { field in
                    "SystemKit.JSONSchema.Property(\"\(field.name)\", SystemKit.JSONSchema.of(\(field.type.metatype)), "
                        + "required: \(!field.isOptional))"
                }
                return "SystemKit.EventCase(\"\(eventCase.name)\"\(effect), fields: [\(list.joined(separator: ", "))])"
            case .flattened(let type):
                return
                    "SystemKit.EventCase(\"\(eventCase.name)\"\(effect), flattening: SystemKit.JSONSchema.of(\(type.metatype)))"
            }
        }
        let body = entries.map { "        \($0)," }.joined(separator: "\n")
        return """
            /// Every case's wire name, whether clients may post it, and its JSON Schema.
            \(raw: access)static var eventCases: [SystemKit.EventCase] {
                [
            \(raw: body)
                ]
            }
            """
    }

    private static func decoder(_ access: String, _ cases: [EventCase]) -> DeclSyntax {
        let branches = cases.map { eventCase -> String in
            let value: String
            switch eventCase.payload {
            case .none: value = ".\(eventCase.name)"
            case .fields(let fields):
                let arguments = fields.map { field in
                    let type = field.type.wrappedOptional ?? field.type
                    let method = field.isOptional ? "decodeIfPresent" : "decode"
                    return "\(field.name): try container.\(method)(\(type.metatype), "
                        + "forKey: SystemKit.TaggedEventKey(\"\(field.name)\"))"
                }
                value = ".\(eventCase.name)(\(arguments.joined(separator: ", ")))"
            case .flattened(let type): value = ".\(eventCase.name)(try \(type.trimmedDescription).init(from: decoder))"
            }
            return "    case \"\(eventCase.name)\": self = \(value)"
        }
        return """
            \(raw: access)init(from decoder: any Decoder) throws {
                let container = try decoder.container(keyedBy: SystemKit.TaggedEventKey.self)
                switch try container.eventType() {
            \(raw: branches.joined(separator: "\n"))
                case let other: throw container.unknownType(other, known: Self.eventTypes)
                }
            }
            """
    }

    private static func encoder(_ access: String, _ cases: [EventCase]) -> DeclSyntax {
        let branches = cases.map { eventCase -> String in
            let tag = "try container.encode(\"\(eventCase.name)\", forKey: .type)"
            switch eventCase.payload {
            case .none:
                return "    case .\(eventCase.name):\n        \(tag)"
            case .fields(let fields):
                let bindings = fields.map { "let \($0.name)" }.joined(separator: ", ")
                let writes = fields.map { field in
                    let method = field.isOptional ? "encodeIfPresent" : "encode"
                    return "        try container.\(method)(\(field.name), "
                        + "forKey: SystemKit.TaggedEventKey(\"\(field.name)\"))"
                }
                return "    case .\(eventCase.name)(\(bindings)):\n        \(tag)\n\(writes.joined(separator: "\n"))"
            case .flattened:
                return
                    "    case .\(eventCase.name)(let payload):\n        \(tag)\n        try payload.encode(to: encoder)"
            }
        }
        let body = branches.joined(separator: "\n")
        return """
            \(raw: access)func encode(to encoder: any Encoder) throws {
                var container = encoder.container(keyedBy: SystemKit.TaggedEventKey.self)
                switch self {
            \(raw: body)
                }
            }
            """
    }
}

extension DeclGroupSyntax {
    /// The access modifier the derived members need to witness a conformance of this type (`public `, `package `
    /// or nothing).
    var memberAccess: String {
        for modifier in modifiers {
            switch modifier.name.tokenKind {
            case .keyword(.public), .keyword(.open): return "public "
            case .keyword(.package): return "package "
            default: continue
            }
        }
        return ""
    }
}

extension TypeSyntax {
    /// The type as an expression of its metatype: `Int.self`, `Optional<WallTime>.self`.
    var metatype: String {
        if let wrapped = wrappedOptional { return "Optional<\(wrapped.trimmedDescription)>.self" }
        return "\(trimmedDescription).self"
    }
}
