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
        let coding = TaggedCoding(kind: .event, cases: cases, access: access)
        return [
            typesMember(access, "eventTypes", cases.map(\.name), "Every event type, in declaration order."),
            typesMember(
                access,
                "clientEventTypes",
                cases.filter { !$0.isEffect }.map(\.name),
                "The types clients may post: every case not marked @Effect."
            ),
            coding.casesMember(),
            coding.decoder(),
            coding.encoder(),
            coding.plainWriter(),
            coding.plainReader(),
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
