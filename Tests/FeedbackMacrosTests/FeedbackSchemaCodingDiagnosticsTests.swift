import SwiftSyntaxMacrosGenericTestSupport
import Testing

/// What `@FeedbackSchema`'s tagged enums, stable structs and `@Flattened` refuse, where, and the fix-its.
@Suite struct FeedbackSchemaCodingDiagnosticsTests {
    @Test func anEnumWithAssociatedValuesNeedsATag() {
        expectExpansion(
            """
            @FeedbackSchema
            enum Status {
                case idle
                case failed(message: String)
            }
            """,
            expands: """
                enum Status {
                    case idle
                    case failed(message: String)
                }
                """,
            diagnostics: [
                DiagnosticSpec(
                    message: "an enum with associated values is written as an object whose tag member names the "
                        + "case: name that member with @FeedbackSchema(tag:)",
                    line: 4,
                    column: 10,
                    fixIts: [FixItSpec(message: "tag its cases with \"type\"")]
                )
            ],
            applyFixIts: ["tag its cases with \"type\""],
            fixedSource: """
                @FeedbackSchema(tag: "type")
                enum Status {
                    case idle
                    case failed(message: String)
                }
                """
        )
    }

    @Test func aTaggedEnumsFieldCannotBeNamedLikeItsTag() {
        expectExpansion(
            """
            @FeedbackSchema(tag: "kind")
            enum Shape {
                case circle(kind: Int)
                case circle
            }
            """,
            expands: """
                enum Shape {
                    case circle(kind: Int)
                    case circle
                }
                """,
            diagnostics: [
                DiagnosticSpec(
                    message: "\"kind\" is the tag on the wire; a field cannot have that name",
                    line: 3,
                    column: 17
                ),
                DiagnosticSpec(
                    message:
                        "another case is already written as {\"kind\":\"circle\"}: each case needs a name of its own",
                    line: 4,
                    column: 10
                ),
            ]
        )
    }

    @Test func argumentsApplyToTheirKindOfType() {
        expectExpansion(
            """
            @FeedbackSchema(tag: "kind")
            struct Point: Codable {
                var x: Int
            }
            """,
            expands: """
                struct Point: Codable {
                    var x: Int
                }
                """,
            diagnostics: [
                DiagnosticSpec(
                    message: "tag: names the member that tags an enum's cases; a struct has none",
                    line: 1,
                    column: 1
                )
            ]
        )
        expectExpansion(
            """
            @FeedbackSchema(coding: .stable)
            enum Level: String {
                case low
            }
            """,
            expands: """
                enum Level: String {
                    case low
                }
                """,
            diagnostics: [
                DiagnosticSpec(
                    message: "coding: applies to a struct; an enum's cases are tagged with @FeedbackSchema(tag:)",
                    line: 1,
                    column: 1
                )
            ]
        )
    }

    @Test func flattenedNeedsAStableStructAndAValue() {
        expectExpansion(
            """
            @FeedbackSchema
            struct State: Codable {
                @Flattened var status: Status
            }
            """,
            expands: """
                struct State: Codable {
                    var status: Status
                }
                """,
            diagnostics: [
                DiagnosticSpec(
                    message: "synthesized Codable cannot write a member's fields beside the struct's own: use "
                        + "@FeedbackSchema(coding: .stable) on this struct",
                    line: 3,
                    column: 5
                )
            ]
        )
        expectExpansion(
            """
            @FeedbackSchema(coding: .stable)
            struct State: Codable {
                @Flattened var status: Status?
            }
            """,
            expands: """
                struct State: Codable {
                    var status: Status?
                }
                """,
            diagnostics: [
                DiagnosticSpec(
                    message: "a flattened member cannot be optional: give it a default value, which an absent tag "
                        + "reads as",
                    line: 3,
                    column: 28
                )
            ]
        )
        expectExpansion(
            """
            @Flattened func status() {}
            """,
            expands: """
                func status() {}
                """,
            diagnostics: [
                DiagnosticSpec(
                    message: "@Flattened marks a stored property of a @FeedbackSchema(coding: .stable) struct",
                    line: 1,
                    column: 1
                )
            ]
        )
    }
}
