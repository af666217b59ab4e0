import SwiftSyntaxMacrosGenericTestSupport
import Testing

/// `@FeedbackSchema`: what it derives for a struct and a String enum, and what it refuses.
@Suite struct FeedbackSchemaMacroTests {
    @Test func derivesAStructsSchemaFromItsStoredProperties() {
        expectExpansion(
            """
            @FeedbackSchema
            public struct State: Codable {
                var holder: Holder
                var count, total: Int
                var due: WallTime?
                let fixed = 3
                var computed: Int { count * 2 }
                static var shared = 0
            }
            """,
            expands: """
                public struct State: Codable {
                    var holder: Holder
                    var count, total: Int
                    var due: WallTime?
                    let fixed = 3
                    var computed: Int { count * 2 }
                    static var shared = 0

                    /// The JSON Schema of this type's JSON, derived from its declaration.
                    public static var jsonSchema: SystemKit.JSONSchema {
                        SystemKit.JSONSchema.object([SystemKit.JSONSchema.Property("holder", SystemKit.JSONSchema.of(Holder.self), required: true), SystemKit.JSONSchema.Property("count", SystemKit.JSONSchema.of(Int.self), required: true), SystemKit.JSONSchema.Property("total", SystemKit.JSONSchema.of(Int.self), required: true), SystemKit.JSONSchema.Property("due", SystemKit.JSONSchema.of(Optional<WallTime>.self), required: false)])
                    }

                    /// The value's JSON as the host writes a state, without an encoder (`SystemKit.StateJSONWritable`).
                    public func appendStateJSON(to bytes: inout [UInt8]) -> Bool {
                        bytes.append(UInt8(ascii: "{"))
                        bytes.append(contentsOf: #""count":"#.utf8)
                        guard SystemKit.StateJSON.append(self.count, to: &bytes) else {
                            return false
                        }
                        if let present = self.due {
                            bytes.append(contentsOf: #","due":"#.utf8)
                            guard SystemKit.StateJSON.append(present, to: &bytes) else {
                                return false
                            }
                        }
                        bytes.append(contentsOf: #","holder":"#.utf8)
                        guard SystemKit.StateJSON.append(self.holder, to: &bytes) else {
                            return false
                        }
                        bytes.append(contentsOf: #","total":"#.utf8)
                        guard SystemKit.StateJSON.append(self.total, to: &bytes) else {
                            return false
                        }
                        bytes.append(UInt8(ascii: "}"))
                        return true
                    }
                }

                extension State: SystemKit.JSONSchemaDescribing, SystemKit.StateJSONWritable {
                }
                """
        )
    }

    @Test func honoursCodingKeys() {
        expectExpansion(
            """
            @FeedbackSchema
            struct Page: Codable {
                var url: String
                var hidden: Int?
                enum CodingKeys: String, CodingKey {
                    case url = "href"
                }
            }
            """,
            expands: """
                struct Page: Codable {
                    var url: String
                    var hidden: Int?
                    enum CodingKeys: String, CodingKey {
                        case url = "href"
                    }

                    /// The JSON Schema of this type's JSON, derived from its declaration.
                    static var jsonSchema: SystemKit.JSONSchema {
                        SystemKit.JSONSchema.object([SystemKit.JSONSchema.Property("href", SystemKit.JSONSchema.of(String.self), required: true)])
                    }

                    /// The value's JSON as the host writes a state, without an encoder (`SystemKit.StateJSONWritable`).
                    func appendStateJSON(to bytes: inout [UInt8]) -> Bool {
                        bytes.append(UInt8(ascii: "{"))
                        bytes.append(contentsOf: #""href":"#.utf8)
                        guard SystemKit.StateJSON.append(self.url, to: &bytes) else {
                            return false
                        }
                        bytes.append(UInt8(ascii: "}"))
                        return true
                    }
                }

                extension Page: SystemKit.JSONSchemaDescribing, SystemKit.StateJSONWritable {
                }
                """
        )
    }

    @Test func aStateWhoseFirstMembersMayBeLeftOutDecidesItsCommasAsItWrites() {
        expectExpansion(
            """
            @FeedbackSchema
            struct Slots: Codable {
                var c: Int
                var b: String?
                var a: Int?
            }
            """,
            expands: """
                struct Slots: Codable {
                    var c: Int
                    var b: String?
                    var a: Int?

                    /// The JSON Schema of this type's JSON, derived from its declaration.
                    static var jsonSchema: SystemKit.JSONSchema {
                        SystemKit.JSONSchema.object([SystemKit.JSONSchema.Property("c", SystemKit.JSONSchema.of(Int.self), required: true), SystemKit.JSONSchema.Property("b", SystemKit.JSONSchema.of(Optional<String>.self), required: false), SystemKit.JSONSchema.Property("a", SystemKit.JSONSchema.of(Optional<Int>.self), required: false)])
                    }

                    /// The value's JSON as the host writes a state, without an encoder (`SystemKit.StateJSONWritable`).
                    func appendStateJSON(to bytes: inout [UInt8]) -> Bool {
                        bytes.append(UInt8(ascii: "{"))
                        var comma = false
                        if let present = self.a {
                            bytes.append(contentsOf: #""a":"#.utf8)
                            comma = true
                            guard SystemKit.StateJSON.append(present, to: &bytes) else {
                                return false
                            }
                        }
                        if let present = self.b {
                            if comma {
                                bytes.append(UInt8(ascii: ","))
                            }
                            bytes.append(contentsOf: #""b":"#.utf8)
                            comma = true
                            guard SystemKit.StateJSON.append(present, to: &bytes) else {
                                return false
                            }
                        }
                        if comma {
                            bytes.append(UInt8(ascii: ","))
                        }
                        bytes.append(contentsOf: #""c":"#.utf8)
                        guard SystemKit.StateJSON.append(self.c, to: &bytes) else {
                            return false
                        }
                        bytes.append(UInt8(ascii: "}"))
                        return true
                    }
                }

                extension Slots: SystemKit.JSONSchemaDescribing, SystemKit.StateJSONWritable {
                }
                """
        )
    }

    @Test func aPropertyWrapperOrALazyMemberLeavesTheStateToCodable() {
        // Synthesized `Codable` writes a wrapped property through its wrapper: only it knows those bytes.
        expectExpansion(
            """
            @FeedbackSchema
            struct Limits: Codable {
                @Clamped var level: Int
                private(set) var name: String
            }
            """,
            expands: """
                struct Limits: Codable {
                    @Clamped var level: Int
                    private(set) var name: String

                    /// The JSON Schema of this type's JSON, derived from its declaration.
                    static var jsonSchema: SystemKit.JSONSchema {
                        SystemKit.JSONSchema.object([SystemKit.JSONSchema.Property("level", SystemKit.JSONSchema.of(Int.self), required: true), SystemKit.JSONSchema.Property("name", SystemKit.JSONSchema.of(String.self), required: true)])
                    }
                }

                extension Limits: SystemKit.JSONSchemaDescribing {
                }
                """
        )
    }

    @Test func derivesAStringEnumsValues() {
        expectExpansion(
            """
            @FeedbackSchema
            enum Holder: String, Codable {
                case human
                case machine = "the machine"
            }
            """,
            expands: """
                enum Holder: String, Codable {
                    case human
                    case machine = "the machine"

                    /// The JSON Schema of this type's JSON, derived from its declaration.
                    static var jsonSchema: SystemKit.JSONSchema {
                        SystemKit.JSONSchema.strings(["human", "the machine"])
                    }
                }

                extension Holder: SystemKit.JSONSchemaDescribing {
                }
                """
        )
    }

    @Test func refusesWhatItCannotDescribe() {
        expectExpansion(
            """
            @FeedbackSchema
            enum Level: Int {
                case low
            }
            """,
            expands: """
                enum Level: Int {
                    case low
                }
                """,
            diagnostics: [
                DiagnosticSpec(
                    message: "@FeedbackSchema derives an enum's schema from its String raw values",
                    line: 2,
                    column: 6
                )
            ]
        )
        expectExpansion(
            """
            @FeedbackSchema
            struct Custom: Codable {
                var a: Int
                func encode(to encoder: any Encoder) throws {}
            }
            """,
            expands: """
                struct Custom: Codable {
                    var a: Int
                    func encode(to encoder: any Encoder) throws {}
                }
                """,
            diagnostics: [
                DiagnosticSpec(
                    message: "this type writes its own init(from:) or encode(to:), so a schema derived from its "
                        + "properties would not describe its JSON; conform it to JSONSchemaDescribing beside its "
                        + "coding instead",
                    line: 4,
                    column: 10
                )
            ]
        )
        expectExpansion(
            """
            @FeedbackSchema
            struct Untyped {
                var a = 0
            }
            """,
            expands: """
                struct Untyped {
                    var a = 0
                }
                """,
            diagnostics: [
                DiagnosticSpec(
                    message: "give this stored property a type annotation: its schema is derived from it",
                    line: 3,
                    column: 9
                )
            ]
        )
        expectExpansion(
            """
            @FeedbackSchema
            class Box {}
            """,
            expands: "class Box {}",
            diagnostics: [
                DiagnosticSpec(
                    message: "@FeedbackSchema applies to a struct, or to an enum with String raw values; use "
                        + "@FeedbackEvent for events",
                    line: 1,
                    column: 1
                )
            ]
        )
    }
}
