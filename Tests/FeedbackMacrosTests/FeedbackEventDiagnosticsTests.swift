import SwiftSyntaxMacrosGenericTestSupport
import Testing

/// Every misuse `@FeedbackEvent` and `@Effect` refuse at compile time, where they are written, with a fix-it where
/// there is one.
@Suite struct FeedbackEventDiagnosticsTests {
    @Test func onlyAnEnumHoldsEvents() {
        expectExpansion(
            """
            @FeedbackEvent
            struct Event {}
            """,
            expands: "struct Event {}",
            diagnostics: [DiagnosticSpec(message: "@FeedbackEvent applies to an enum of events", line: 1, column: 1)]
        )
    }

    @Test func twoCasesWithOneWireNameAreRefused() {
        expectExpansion(
            """
            @FeedbackEvent
            enum Event {
                case add(amount: Int)
                case add(by: Int)
            }
            """,
            expands: """
                enum Event {
                    case add(amount: Int)
                    case add(by: Int)
                }
                """,
            diagnostics: [
                DiagnosticSpec(
                    message: #"another case is already written as {"type":"add"}: each case needs a name of its own"#,
                    line: 4,
                    column: 10
                )
            ]
        )
    }

    @Test func unlabeledFieldsAreRefusedWithLabelsToAdd() {
        expectExpansion(
            """
            @FeedbackEvent
            enum Event {
                case move(Int, y: Int)
            }
            """,
            expands: """
                enum Event {
                    case move(Int, y: Int)
                }
                """,
            diagnostics: [
                DiagnosticSpec(
                    message: "a case with several fields needs a label for each: the labels are the JSON field names",
                    line: 3,
                    column: 10,
                    fixIts: [FixItSpec(message: "label the fields")]
                )
            ],
            applyFixIts: ["label the fields"],
            fixedSource: """
                @FeedbackEvent
                enum Event {
                    case move(field1: Int, y: Int)
                }
                """
        )
    }

    @Test func anUnlabeledNumberIsRefusedWithALabelToAdd() {
        expectExpansion(
            """
            @FeedbackEvent
            enum Event {
                case set(Int)
            }
            """,
            expands: """
                enum Event {
                    case set(Int)
                }
                """,
            diagnostics: [
                DiagnosticSpec(
                    message: "an unlabeled payload's fields are written beside \"type\", so it must be an object; "
                        + "label this value",
                    line: 3,
                    column: 14,
                    fixIts: [FixItSpec(message: #"label it "value""#)]
                )
            ],
            applyFixIts: [#"label it "value""#],
            fixedSource: """
                @FeedbackEvent
                enum Event {
                    case set(value: Int)
                }
                """
        )
    }

    @Test func aPayloadWithoutJSONIsRefused() {
        expectExpansion(
            """
            @FeedbackEvent
            enum Event {
                case run(action: () -> Void)
                case pair(of: (Int, Int))
                case any(value: any Sendable)
            }
            """,
            expands: """
                enum Event {
                    case run(action: () -> Void)
                    case pair(of: (Int, Int))
                    case any(value: any Sendable)
                }
                """,
            diagnostics: [
                DiagnosticSpec(message: "a function: this payload cannot be written as JSON", line: 3, column: 22),
                DiagnosticSpec(message: "a tuple: this payload cannot be written as JSON", line: 4, column: 19),
                DiagnosticSpec(message: "an existential: this payload cannot be written as JSON", line: 5, column: 21),
            ]
        )
    }

    @Test func aFieldCannotBeNamedType() {
        expectExpansion(
            """
            @FeedbackEvent
            enum Event {
                case kind(type: String)
            }
            """,
            expands: """
                enum Event {
                    case kind(type: String)
                }
                """,
            diagnostics: [
                DiagnosticSpec(
                    message: #""type" is the event's tag on the wire; a field cannot have that name"#,
                    line: 3,
                    column: 15
                )
            ]
        )
    }

    @Test func effectMarksOnlyEnumCases() {
        expectExpansion(
            """
            @Effect
            func send() {}
            """,
            expands: "func send() {}",
            diagnostics: [DiagnosticSpec(message: "@Effect marks a case of a @FeedbackEvent enum", line: 1, column: 1)]
        )
    }
}
