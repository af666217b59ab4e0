import SwiftCompilerPlugin
import SwiftSyntaxMacros

/// The compiler plug-in: the macros SystemKit declares (`@FeedbackEvent`, `@Effect`, `@FeedbackSchema`, `@Flattened`).
@main
struct FeedbackMacrosPlugin: CompilerPlugin {
    let providingMacros: [any Macro.Type] = [
        FeedbackEventMacro.self,
        MarkerMacro.self,
        FeedbackSchemaMacro.self,
    ]
}
