import SwiftSyntaxMacrosGenericTestSupport
import Testing

/// `@FeedbackSchema` beyond synthesized `Codable`: an enum with associated values tagged by a member of its own, a
/// struct whose coding it writes (`coding: .stable`, `@Flattened`), and generic containers.
@Suite struct FeedbackSchemaCodingTests {
    @Test func derivesATaggedEnumsCodingAndCases() {
        expectExpansion(
            """
            @FeedbackSchema(tag: "status")
            public enum Status {
                case idle
                case failed(message: String = "", code: Int?)
                case moved(Place)
            }
            """,
            expands: """
                public enum Status {
                    case idle
                    case failed(message: String = "", code: Int?)
                    case moved(Place)

                    /// The member naming the case.
                    public static var tagKey: String {
                        "status"
                    }

                    /// Every case's wire name, whether clients may post it, and its JSON Schema.
                    public static var taggedCases: [SystemKit.EventCase] {
                        [
                            SystemKit.EventCase("idle", tag: "status"),
                            SystemKit.EventCase("failed", tag: "status", fields: [SystemKit.JSONSchema.Property("message", SystemKit.JSONSchema.of(Optional<String>.self), required: false), SystemKit.JSONSchema.Property("code", SystemKit.JSONSchema.of(Optional<Int>.self), required: false)]),
                            SystemKit.EventCase("moved", tag: "status", flattening: SystemKit.JSONSchema.of(Place.self)),
                        ]
                    }

                    public init(from decoder: any Decoder) throws {
                        let container = try decoder.container(keyedBy: SystemKit.TaggedEventKey.self)
                        switch try container.tag("status") {
                        case "idle":
                            self = .idle
                        case "failed":
                            self = .failed(message: try container.decodeIfPresent(String.self, forKey: SystemKit.TaggedEventKey("message")) ?? "", code: try container.decodeIfPresent(Int.self, forKey: SystemKit.TaggedEventKey("code")))
                        case "moved":
                            self = .moved(try Place.init(from: decoder))
                        case let other:
                            throw container.unknownTag(other, of: "status", known: ["idle", "failed", "moved"])
                        }
                    }

                    public func encode(to encoder: any Encoder) throws {
                        var container = encoder.container(keyedBy: SystemKit.TaggedEventKey.self)
                        switch self {
                        case .idle:
                            try container.encode("idle", forKey: SystemKit.TaggedEventKey("status"))
                        case .failed(let message, let code):
                            try container.encode("failed", forKey: SystemKit.TaggedEventKey("status"))
                            try container.encode(message, forKey: SystemKit.TaggedEventKey("message"))
                            try container.encodeIfPresent(code, forKey: SystemKit.TaggedEventKey("code"))
                        case .moved(let payload):
                            try container.encode("moved", forKey: SystemKit.TaggedEventKey("status"))
                            try payload.encode(to: encoder)
                        }
                    }
                }

                extension Status: SystemKit.TaggedValue {
                }
                """
        )
    }

    @Test func writesAStableStructsCodingWithItsFlattenedMember() {
        expectExpansion(
            """
            @FeedbackSchema(coding: .stable)
            struct State: Codable {
                var query: String = ""
                var items: [Item] = []
                var next: String?
                @Flattened var status: Status = .idle
                var count: Int
                var byName: [String: [Int?]] = [:]
            }
            """,
            expands: """
                struct State: Codable {
                    var query: String = ""
                    var items: [Item] = []
                    var next: String?
                    var status: Status = .idle
                    var count: Int
                    var byName: [String: [Int?]] = [:]

                    /// The JSON Schema of this type's JSON, derived from its declaration.
                    static var jsonSchema: SystemKit.JSONSchema {
                        SystemKit.JSONSchema.object([SystemKit.JSONSchema.Property("query", SystemKit.JSONSchema.of(Optional<String>.self), required: false), SystemKit.JSONSchema.Property("items", SystemKit.JSONSchema.of(Optional<[Item]>.self), required: false), SystemKit.JSONSchema.Property("next", SystemKit.JSONSchema.of(Optional<String>.self), required: false), SystemKit.JSONSchema.Property("count", SystemKit.JSONSchema.of(Int.self), required: true), SystemKit.JSONSchema.Property("byName", SystemKit.JSONSchema.of(Optional<[String: [Int?]]>.self), required: false)]).flattening(Status.self, defaulted: true)
                    }

                    init(from decoder: any Decoder) throws {
                        let container = try decoder.container(keyedBy: SystemKit.TaggedEventKey.self)
                        self.query = try container.decodeIfPresent(String.self, forKey: SystemKit.TaggedEventKey("query")) ?? ""
                        self.items = try container.decodeIfPresent([Item].self, forKey: SystemKit.TaggedEventKey("items")) ?? []
                        self.next = try container.decodeIfPresent(String.self, forKey: SystemKit.TaggedEventKey("next"))
                        self.status = try Status.decode(from: decoder, default: .idle)
                        self.count = try container.decode(Int.self, forKey: SystemKit.TaggedEventKey("count"))
                        self.byName = try container.decodeIfPresent([String: [Int?]].self, forKey: SystemKit.TaggedEventKey("byName")) ?? [:]
                    }

                    func encode(to encoder: any Encoder) throws {
                        var container = encoder.container(keyedBy: SystemKit.TaggedEventKey.self)
                        try container.encode(self.query, forKey: SystemKit.TaggedEventKey("query"))
                        try container.encode(self.items, forKey: SystemKit.TaggedEventKey("items"))
                        try container.encode(self.next, forKey: SystemKit.TaggedEventKey("next"))
                        try self.status.encode(to: encoder)
                        try container.encode(self.count, forKey: SystemKit.TaggedEventKey("count"))
                        try container.encode(self.byName, forKey: SystemKit.TaggedEventKey("byName"))
                    }
                }

                extension State: SystemKit.JSONSchemaDescribing {
                }
                """
        )
    }

    @Test func aFlattenedMemberWithoutADefaultMustCarryItsTag() {
        expectExpansion(
            """
            @FeedbackSchema(coding: .stable)
            struct Light: Codable {
                @Flattened var phase: Phase
            }
            """,
            expands: """
                struct Light: Codable {
                    var phase: Phase

                    /// The JSON Schema of this type's JSON, derived from its declaration.
                    static var jsonSchema: SystemKit.JSONSchema {
                        SystemKit.JSONSchema.object([]).flattening(Phase.self, defaulted: false)
                    }

                    init(from decoder: any Decoder) throws {
                        self.phase = try Phase(from: decoder)
                    }

                    func encode(to encoder: any Encoder) throws {
                        try self.phase.encode(to: encoder)
                    }
                }

                extension Light: SystemKit.JSONSchemaDescribing {
                }
                """
        )
    }

    @Test func aGenericContainerDescribesItsJSONWhereItsParametersDo() {
        expectExpansion(
            """
            @FeedbackSchema
            public struct Paged<Item: Codable, Key: Codable>: Codable {
                public var items: [Item]
                public var next: Key?
            }
            """,
            expands: """
                public struct Paged<Item: Codable, Key: Codable>: Codable {
                    public var items: [Item]
                    public var next: Key?
                }

                extension Paged: SystemKit.JSONSchemaDescribing where Item: SystemKit.JSONSchemaDescribing, Key: SystemKit.JSONSchemaDescribing {
                    /// The JSON Schema of this type's JSON, derived from its declaration.
                    public static var jsonSchema: SystemKit.JSONSchema {
                        SystemKit.JSONSchema.object([SystemKit.JSONSchema.Property("items", SystemKit.JSONSchema.of([Item].self), required: true), SystemKit.JSONSchema.Property("next", SystemKit.JSONSchema.of(Optional<Key>.self), required: false)])
                    }
                }
                """
        )
    }
}
