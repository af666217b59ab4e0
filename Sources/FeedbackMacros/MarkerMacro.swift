public import SwiftSyntax
public import SwiftSyntaxMacros

/// `@Effect` and `@Flattened`: marks that another macro reads, expanding to nothing themselves. `@Effect` marks an
/// event case that only feedbacks send (an effect's result), which `@FeedbackEvent` leaves out of the types clients
/// may post; `@Flattened` a stored property of a `@FeedbackSchema(coding: .stable)` struct whose value is written
/// beside the struct's own members. Each refuses a declaration of another kind.
public struct MarkerMacro: PeerMacro {
    public static func expansion(
        of node: AttributeSyntax,
        providingPeersOf declaration: some DeclSyntaxProtocol,
        in context: some MacroExpansionContext
    ) throws -> [DeclSyntax] {
        switch node.attributeName.trimmedDescription {
        case "Effect" where !declaration.is(EnumCaseDeclSyntax.self):
            context.diagnose(MacroProblem.effectOutsideEnumCase.at(node))
        case "Flattened" where !declaration.is(VariableDeclSyntax.self):
            context.diagnose(MacroProblem.flattenedOutsideProperty.at(node))
        default: break
        }
        return []
    }
}
