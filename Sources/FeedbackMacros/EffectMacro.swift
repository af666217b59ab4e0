public import SwiftSyntax
public import SwiftSyntaxMacros

/// `@Effect` marks an event case that only feedbacks send (an effect's result): `@FeedbackEvent` leaves it out of
/// the types clients may post. It expands to nothing itself.
public struct EffectMacro: PeerMacro {
    public static func expansion(
        of node: AttributeSyntax,
        providingPeersOf declaration: some DeclSyntaxProtocol,
        in context: some MacroExpansionContext
    ) throws -> [DeclSyntax] {
        if !declaration.is(EnumCaseDeclSyntax.self) {
            context.diagnose(MacroProblem.effectOutsideEnumCase.at(node))
        }
        return []
    }
}
