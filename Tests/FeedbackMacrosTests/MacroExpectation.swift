import FeedbackMacros
import SwiftSyntaxBuilder
import SwiftSyntaxMacroExpansion
import SwiftSyntaxMacros
import SwiftSyntaxMacrosGenericTestSupport
import Testing

/// The macros under test, by the names SystemKit declares them with.
let feedbackMacros: [String: MacroSpec] = [
    "FeedbackEvent": MacroSpec(type: FeedbackEventMacro.self, conformances: ["TaggedEvent"]),
    "Effect": MacroSpec(type: MarkerMacro.self),
    "FeedbackSchema": MacroSpec(
        type: FeedbackSchemaMacro.self,
        conformances: ["JSONSchemaDescribing", "TaggedValue", "StateJSONWritable"]
    ),
    "Flattened": MacroSpec(type: MarkerMacro.self),
]

/// `assertMacroExpansion` with its failures recorded as Swift Testing issues.
func expectExpansion(
    _ source: String,
    expands expanded: String,
    diagnostics: [DiagnosticSpec] = [],
    applyFixIts: [String]? = nil,
    fixedSource: String? = nil,
    sourceLocation: SourceLocation = #_sourceLocation
) {
    assertMacroExpansion(
        source,
        expandedSource: expanded,
        diagnostics: diagnostics,
        macroSpecs: feedbackMacros,
        applyFixIts: applyFixIts,
        fixedSource: fixedSource,
        failureHandler: { failure in Issue.record(Comment(rawValue: failure.message), sourceLocation: sourceLocation) }
    )
}
