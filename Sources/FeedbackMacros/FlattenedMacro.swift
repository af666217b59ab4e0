public import SwiftSyntax
public import SwiftSyntaxMacros

/// `@Flattened` marks a stored property of a `@FeedbackSchema(coding: .stable)` struct whose value is written beside
/// the struct's own members; that struct's macro reads it. It expands to nothing itself.
public struct FlattenedMacro: PeerMacro {
    public static func expansion(
        of node: AttributeSyntax,
        providingPeersOf declaration: some DeclSyntaxProtocol,
        in context: some MacroExpansionContext
    ) throws -> [DeclSyntax] {
        if !declaration.is(VariableDeclSyntax.self) {
            context.diagnose(MacroProblem.flattenedOutsideProperty.at(node))
        }
        return []
    }
}
