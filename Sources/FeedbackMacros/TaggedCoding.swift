import SwiftSyntax
import SwiftSyntaxBuilder

/// The coding and schemas of an enum written as an object tagged by one of its members: events by `"type"`
/// (`@FeedbackEvent`), other values by the member `@FeedbackSchema(tag:)` names. Both macros derive the same shape.
struct TaggedCoding {
    /// The tagged enum's kind: what its derived members are called.
    enum Kind {
        /// An event: `eventCases`, read and written through `TaggedEventKey.type`.
        case event
        /// A `TaggedValue` tagged by this member: `taggedCases`.
        case value(tag: String)
    }

    let kind: Kind
    let cases: [EventCase]
    let access: String

    private var tag: String {
        switch kind {
        case .event: "type"
        case .value(let tag): tag
        }
    }

    private var tagKey: String {
        switch kind {
        case .event: ".type"
        case .value(let tag): "SystemKit.TaggedEventKey(\"\(tag)\")"
        }
    }

    /// `eventCases` or `taggedCases`: every case's tag and schema.
    func casesMember() -> DeclSyntax {
        let tagArgument: String
        let name: String
        switch kind {
        case .event: (tagArgument, name) = ("", "eventCases")
        case .value(let tag): (tagArgument, name) = (", tag: \"\(tag)\"", "taggedCases")
        }
        let entries = cases.map { eventCase -> String in
            let effect = eventCase.isEffect ? ", effect: true" : ""
            let head = "SystemKit.EventCase(\"\(eventCase.name)\"\(tagArgument)\(effect)"
            switch eventCase.payload {
            case .none:
                return "\(head))"
            case .fields(let fields):
                let list = fields.map { field in
                    // A field with a default value may also be null, and then reads as that value.
                    let nullable = field.defaultValue != nil && !field.isOptional
                    let metatype = nullable ? "Optional<\(field.type.trimmedDescription)>.self" : field.type.metatype
                    return "SystemKit.JSONSchema.Property(\"\(field.name)\", SystemKit.JSONSchema.of(\(metatype)), "
                        + "required: \(field.isRequired))"
                }
                return "\(head), fields: [\(list.joined(separator: ", "))])"
            case .flattened(let type):
                return "\(head), flattening: SystemKit.JSONSchema.of(\(type.metatype)))"
            }
        }
        let body = entries.map { "        \($0)," }.joined(separator: "\n")
        return """
            /// Every case's wire name, whether clients may post it, and its JSON Schema.
            \(raw: access)static var \(raw: name): [SystemKit.EventCase] {
                [
            \(raw: body)
                ]
            }
            """
    }

    func decoder() -> DeclSyntax {
        let branches = cases.map { eventCase -> String in
            let value: String
            switch eventCase.payload {
            case .none: value = ".\(eventCase.name)"
            case .fields(let fields):
                let arguments = fields.map { field in
                    let type = field.type.wrappedOptional ?? field.type
                    let method = field.isRequired ? "decode" : "decodeIfPresent"
                    let fallback = field.defaultValue.map { " ?? \($0.description)" } ?? ""
                    return "\(field.name): try container.\(method)(\(type.metatype), "
                        + "forKey: SystemKit.TaggedEventKey(\"\(field.name)\"))\(fallback)"
                }
                value = ".\(eventCase.name)(\(arguments.joined(separator: ", ")))"
            case .flattened(let type): value = ".\(eventCase.name)(try \(type.trimmedDescription).init(from: decoder))"
            }
            return "    case \"\(eventCase.name)\": self = \(value)"
        }
        let read: String
        let unknown: String
        switch kind {
        case .event: (read, unknown) = ("container.eventType()", "container.unknownType(other, known: Self.eventTypes)")
        case .value(let tag):
            let names = cases.map { "\"\($0.name)\"" }.joined(separator: ", ")
            (read, unknown) = (
                "container.tag(\"\(tag)\")", "container.unknownTag(other, of: \"\(tag)\", known: [\(names)])"
            )
        }
        return """
            \(raw: access)init(from decoder: any Decoder) throws {
                let container = try decoder.container(keyedBy: SystemKit.TaggedEventKey.self)
                switch try \(raw: read) {
            \(raw: branches.joined(separator: "\n"))
                case let other: throw \(raw: unknown)
                }
            }
            """
    }

    func encoder() -> DeclSyntax {
        let branches = cases.map { eventCase -> String in
            let tag = "try container.encode(\"\(eventCase.name)\", forKey: \(tagKey))"
            switch eventCase.payload {
            case .none:
                return "    case .\(eventCase.name):\n        \(tag)"
            case .fields(let fields):
                let bindings = fields.map { "let \($0.name)" }.joined(separator: ", ")
                let writes = fields.map { field in
                    let method = field.isOptional ? "encodeIfPresent" : "encode"
                    return "        try container.\(method)(\(field.name), "
                        + "forKey: SystemKit.TaggedEventKey(\"\(field.name)\"))"
                }
                return "    case .\(eventCase.name)(\(bindings)):\n        \(tag)\n\(writes.joined(separator: "\n"))"
            case .flattened:
                return
                    "    case .\(eventCase.name)(let payload):\n        \(tag)\n        try payload.encode(to: encoder)"
            }
        }
        let body = branches.joined(separator: "\n")
        return """
            \(raw: access)func encode(to encoder: any Encoder) throws {
                var container = encoder.container(keyedBy: SystemKit.TaggedEventKey.self)
                switch self {
            \(raw: body)
                }
            }
            """
    }

    /// `appendPlainJSON(to:)` (events only): each case written as `encode(to:)` above writes it through
    /// `StateWriter`'s plain options, `"type"` and the labels as literal bytes. A case whose names are not plain ASCII
    /// identifiers, whose labels repeat, or whose payload is flattened returns false (the general way writes it).
    func plainWriter() -> DeclSyntax {
        let branches = cases.map { eventCase -> String in
            guard Self.isPlain(eventCase.name) else { return "    case .\(eventCase.name): return false" }
            let head = "{\"\(tag)\":\"\(eventCase.name)\""
            switch eventCase.payload {
            case .none:
                return "    case .\(eventCase.name):\n        bytes.append(contentsOf: #\"\(head)}\"#.utf8)"
            case .fields(let fields):
                let names = fields.map(\.name)
                guard names.allSatisfy(Self.isPlain), Set(names).count == names.count, !names.contains(tag) else {
                    return "    case .\(eventCase.name): return false"
                }
                // Bound by position, never by the fields' own names, which could hide `bytes`.
                let bindings = fields.indices.map { "let field\($0)" }.joined(separator: ", ")
                var lines = ["    case .\(eventCase.name)(\(bindings)):"]
                lines.append("        bytes.append(contentsOf: #\"\(head)\"#.utf8)")
                for (index, field) in fields.enumerated() {
                    let write = [
                        "bytes.append(contentsOf: #\",\"\(field.name)\":\"#.utf8)",
                        "guard SystemKit.PlainJSON.append(field\(index), to: &bytes) else { return false }",
                    ]
                    if field.isOptional {
                        lines.append("        if let field\(index) {")
                        lines += write.map { "            \($0)" }
                        lines.append("        }")
                    } else {
                        lines += write.map { "        \($0)" }
                    }
                }
                lines.append("        bytes.append(UInt8(ascii: \"}\"))")
                return lines.joined(separator: "\n")
            case .flattened:
                return "    case .\(eventCase.name): return false"
            }
        }
        return """
            /// The event as the journal writes it, without an encoder (`SystemKit.TaggedEvent`).
            \(raw: access)func appendPlainJSON(to bytes: inout [UInt8]) -> Bool {
                switch self {
            \(raw: branches.joined(separator: "\n"))
                }
                return true
            }
            """
    }

    /// `init?(plainFields:)` (events only): the cases whose fields are all `Int`, `String` or `Bool` (optional or
    /// not) read from `SystemKit.EventFields` as `init(from:)` above reads them; any other case, and any member of
    /// another kind, nil (the decoder reads it, and says what is wrong).
    func plainReader() -> DeclSyntax {
        var branches: [String] = []
        for eventCase in cases {
            switch eventCase.payload {
            case .none:
                branches.append("    case \"\(eventCase.name)\":\n        self = .\(eventCase.name)")
            case .fields(let fields):
                // Bound by position, never by the fields' own names, which could hide `fields`.
                let reads = fields.enumerated().map { index, field -> String? in
                    let optional = field.type.wrappedOptional != nil || field.defaultValue != nil
                    guard let kind = Self.plainKind(of: field.type.wrappedOptional ?? field.type) else { return nil }
                    let accessor = optional ? "optional\(kind.prefix(1).uppercased())\(kind.dropFirst())" : kind
                    return "guard let field\(index) = fields.\(accessor)(\"\(field.name)\") else { return nil }"
                }
                guard reads.allSatisfy({ $0 != nil }) else { continue }
                let arguments = fields.enumerated().map { index, field in
                    "\(field.name): field\(index)" + (field.defaultValue.map { " ?? \($0.description)" } ?? "")
                }
                var lines = ["    case \"\(eventCase.name)\":"]
                lines += reads.compactMap { $0.map { "        \($0)" } }
                lines.append("        self = .\(eventCase.name)(\(arguments.joined(separator: ", ")))")
                branches.append(lines.joined(separator: "\n"))
            case .flattened:
                continue
            }
        }
        return """
            /// The event from its JSON's members without a decoder, or nil where only `init(from:)` can say
            /// (`SystemKit.TaggedEvent`).
            \(raw: access)init?(plainFields fields: SystemKit.EventFields) {
                switch fields.type {
            \(raw: branches.joined(separator: "\n"))
                default:
                    return nil
                }
            }
            """
    }

    /// The `EventFields` accessor of a field's type, when it is one the reader reads.
    private static func plainKind(of type: TypeSyntax) -> String? {
        switch type.trimmedDescription {
        case "Int", "Swift.Int": "int"
        case "String", "Swift.String": "string"
        case "Bool", "Swift.Bool": "bool"
        default: nil
        }
    }

    private static func isPlain(_ name: String) -> Bool { StoredMember.isPlainName(name) }
}
