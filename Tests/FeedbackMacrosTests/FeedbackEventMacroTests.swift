import SwiftSyntaxMacrosGenericTestSupport
import Testing

@Suite struct FeedbackEventMacroTests {
    @Test func derivesTheTaggedCodingTypesAndSchemas() {
        expectExpansion(
            """
            @FeedbackEvent
            public enum Event: Equatable, Sendable {
                case increment
                case add(amount: Int)
                @Effect case advance(next: WallTime?)
                @Effect case pageLoaded(Page)
            }
            """,
            expands: """
                public enum Event: Equatable, Sendable {
                    case increment
                    case add(amount: Int)
                    case advance(next: WallTime?)
                    case pageLoaded(Page)

                    /// Every event type, in declaration order.
                    public static var eventTypes: [String] {
                        ["increment", "add", "advance", "pageLoaded"]
                    }

                    /// The types clients may post: every case not marked @Effect.
                    public static var clientEventTypes: [String] {
                        ["increment", "add"]
                    }

                    /// Every case's wire name, whether clients may post it, and its JSON Schema.
                    public static var eventCases: [SystemKit.EventCase] {
                        [
                            SystemKit.EventCase("increment"),
                            SystemKit.EventCase("add", fields: [SystemKit.JSONSchema.Property("amount", SystemKit.JSONSchema.of(Int.self), required: true)]),
                            SystemKit.EventCase("advance", effect: true, fields: [SystemKit.JSONSchema.Property("next", SystemKit.JSONSchema.of(Optional<WallTime>.self), required: false)]),
                            SystemKit.EventCase("pageLoaded", effect: true, flattening: SystemKit.JSONSchema.of(Page.self)),
                        ]
                    }

                    public init(from decoder: any Decoder) throws {
                        let container = try decoder.container(keyedBy: SystemKit.TaggedEventKey.self)
                        switch try container.eventType() {
                        case "increment":
                            self = .increment
                        case "add":
                            self = .add(amount: try container.decode(Int.self, forKey: SystemKit.TaggedEventKey("amount")))
                        case "advance":
                            self = .advance(next: try container.decodeIfPresent(WallTime.self, forKey: SystemKit.TaggedEventKey("next")))
                        case "pageLoaded":
                            self = .pageLoaded(try Page.init(from: decoder))
                        case let other:
                            throw container.unknownType(other, known: Self.eventTypes)
                        }
                    }

                    public func encode(to encoder: any Encoder) throws {
                        var container = encoder.container(keyedBy: SystemKit.TaggedEventKey.self)
                        switch self {
                        case .increment:
                            try container.encode("increment", forKey: .type)
                        case .add(let amount):
                            try container.encode("add", forKey: .type)
                            try container.encode(amount, forKey: SystemKit.TaggedEventKey("amount"))
                        case .advance(let next):
                            try container.encode("advance", forKey: .type)
                            try container.encodeIfPresent(next, forKey: SystemKit.TaggedEventKey("next"))
                        case .pageLoaded(let payload):
                            try container.encode("pageLoaded", forKey: .type)
                            try payload.encode(to: encoder)
                        }
                    }

                    /// The event as the journal writes it, without an encoder (`SystemKit.TaggedEvent`).
                    public func appendPlainJSON(to bytes: inout [UInt8]) -> Bool {
                        switch self {
                        case .increment:
                            bytes.append(contentsOf: #"{"type":"increment"}"#.utf8)
                        case .add(let field0):
                            bytes.append(contentsOf: #"{"type":"add""#.utf8)
                            bytes.append(contentsOf: #","amount":"#.utf8)
                            guard SystemKit.PlainJSON.append(field0, to: &bytes) else {
                                return false
                            }
                            bytes.append(UInt8(ascii: "}"))
                        case .advance(let field0):
                            bytes.append(contentsOf: #"{"type":"advance""#.utf8)
                            if let field0 {
                                bytes.append(contentsOf: #","next":"#.utf8)
                                guard SystemKit.PlainJSON.append(field0, to: &bytes) else {
                                    return false
                                }
                            }
                            bytes.append(UInt8(ascii: "}"))
                        case .pageLoaded:
                            return false
                        }
                        return true
                    }

                    /// The event from its JSON's members without a decoder, or nil where only `init(from:)` can say
                    /// (`SystemKit.TaggedEvent`).
                    public init?(plainFields fields: SystemKit.EventFields) {
                        switch fields.type {
                        case "increment":
                            self = .increment
                        case "add":
                            guard let field0 = fields.int("amount") else {
                                return nil
                            }
                            self = .add(amount: field0)
                        default:
                            return nil
                        }
                    }
                }

                extension Event: SystemKit.TaggedEvent {
                }
                """
        )
    }
}
