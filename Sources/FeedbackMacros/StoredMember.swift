import SwiftDiagnostics
import SwiftSyntax
import SwiftSyntaxBuilder

/// A stored property of a `@FeedbackSchema` struct as the macro reads it: its JSON name, type, default value and
/// whether its value is written beside the struct's own members (`@Flattened`).
struct StoredMember {
    let name: String
    let key: String
    let type: TypeSyntax
    let defaultValue: ExprSyntax?
    let isFlattened: Bool
    /// Whether the property carries an attribute other than `@Flattened` (a property wrapper, which synthesized
    /// `Codable` encodes through the wrapper) or a modifier beyond access (`lazy`, `weak`, `unowned`): the derived
    /// writer then leaves the struct to `Codable`.
    var isPlainStorage = true

    /// Whether the member must be present: under stable coding only one without a default value that is not optional.
    func isRequired(stable: Bool) -> Bool {
        type.wrappedOptional == nil && (!stable || defaultValue == nil)
    }

    /// The stored members of `declaration` that its JSON holds, or its problems.
    static func read(_ declaration: StructDeclSyntax, stable: Bool) -> Result<[StoredMember], EventCase.Problems> {
        let members = declaration.memberBlock.members
        for member in members {
            if let function = member.decl.as(FunctionDeclSyntax.self), function.name.text == "encode" {
                return .failure(.init(list: [MacroProblem.schemaCustomCoding.at(function.name)]))
            }
            if let initializer = member.decl.as(InitializerDeclSyntax.self),
                initializer.signature.parameterClause.parameters.first?.firstName.text == "from"
            {
                return .failure(.init(list: [MacroProblem.schemaCustomCoding.at(initializer.initKeyword)]))
            }
        }
        let keys = codingKeys(in: members)
        var stored: [StoredMember] = []
        var problems: [Diagnostic] = []
        for member in members {
            guard let variable = member.decl.as(VariableDeclSyntax.self), !variable.isStatic else { continue }
            let flattened = variable.attributes.first {
                $0.as(AttributeSyntax.self)?.attributeName.trimmedDescription == "Flattened"
            }
            if let flattened, !stable {
                problems.append(MacroProblem.flattenedNeedsStableCoding.at(flattened))
                continue
            }
            var followingType: TypeSyntax?
            var entries: [StoredMember] = []
            for binding in variable.bindings.reversed() {
                if let annotation = binding.typeAnnotation { followingType = annotation.type }
                guard let name = binding.pattern.as(IdentifierPatternSyntax.self)?.identifier.text,
                    binding.isStored
                else { continue }
                // A `let` with a value is never decoded: synthesized `Codable` leaves it out, and so does ours.
                if variable.bindingSpecifier.tokenKind == .keyword(.let) && binding.initializer != nil { continue }
                guard let type = binding.typeAnnotation?.type ?? (binding.initializer == nil ? followingType : nil)
                else {
                    problems.append(MacroProblem.schemaUntypedProperty.at(binding.pattern))
                    continue
                }
                if flattened != nil && type.wrappedOptional != nil {
                    problems.append(MacroProblem.flattenedOptional.at(type))
                    continue
                }
                let key: String
                if let keys {
                    guard let named = keys[name] else { continue }
                    key = named
                } else {
                    key = name
                }
                entries.append(
                    StoredMember(
                        name: name,
                        key: key,
                        type: type.trimmed,
                        defaultValue: binding.initializer?.value.trimmed,
                        isFlattened: flattened != nil,
                        isPlainStorage: variable.hasPlainStorage
                    )
                )
            }
            stored += entries.reversed()
        }
        return problems.isEmpty ? .success(stored) : .failure(.init(list: problems))
    }

    /// The JSON names of a `CodingKeys` enum's cases, when the struct declares one.
    private static func codingKeys(in members: MemberBlockItemListSyntax) -> [String: String]? {
        for member in members {
            guard let keysDecl = member.decl.as(EnumDeclSyntax.self), keysDecl.name.text == "CodingKeys" else {
                continue
            }
            var keys: [String: String] = [:]
            for element in keysDecl.memberBlock.members.compactMap({ $0.decl.as(EnumCaseDeclSyntax.self) })
                .flatMap(\.elements)
            {
                keys[element.name.text] = element.stringRawValue ?? element.name.text
            }
            return keys
        }
        return nil
    }

    /// The schema of a struct of these members and, under stable coding, its coding.
    static func derivation(
        _ members: [StoredMember],
        access: String,
        stable: Bool
    ) -> FeedbackSchemaMacro.Derivation {
        let properties = members.filter { !$0.isFlattened }.map { member in
            // Under stable coding a member with a default value may also be null, and then reads as that value.
            let nullable = stable && member.defaultValue != nil && member.type.wrappedOptional == nil
            let metatype = nullable ? "Optional<\(member.type.trimmedDescription)>.self" : member.type.metatype
            return "SystemKit.JSONSchema.Property(\"\(member.key)\", SystemKit.JSONSchema.of(\(metatype)), "
                + "required: \(member.isRequired(stable: stable)))"
        }
        var schema = "SystemKit.JSONSchema.object([\(properties.joined(separator: ", "))])"
        for member in members where member.isFlattened {
            schema += ".flattening(\(member.type.trimmedDescription).self, defaulted: \(member.defaultValue != nil))"
        }
        guard stable else { return FeedbackSchemaMacro.Derivation(schema: schema) }
        return FeedbackSchemaMacro.Derivation(
            schema: schema,
            coding: [decoder(members, access), encoder(members, access)]
        )
    }

    private static func decoder(_ members: [StoredMember], _ access: String) -> DeclSyntax {
        let reads = members.map { member -> String in
            let type = member.type.wrappedOptional ?? member.type
            if member.isFlattened {
                guard let fallback = member.defaultValue else {
                    return "    self.\(member.name) = try \(type.trimmedDescription)(from: decoder)"
                }
                return
                    "    self.\(member.name) = try \(type.trimmedDescription).decode(from: decoder, default: \(fallback))"
            }
            let key = "forKey: SystemKit.TaggedEventKey(\"\(member.key)\")"
            guard !member.isRequired(stable: true) else {
                return "    self.\(member.name) = try container.decode(\(type.metatype), \(key))"
            }
            let fallback = member.defaultValue.map { " ?? \($0.description)" } ?? ""
            return "    self.\(member.name) = try container.decodeIfPresent(\(type.metatype), \(key))\(fallback)"
        }
        let container =
            members.contains { !$0.isFlattened }
            ? "    let container = try decoder.container(keyedBy: SystemKit.TaggedEventKey.self)\n" : ""
        return """
            \(raw: access)init(from decoder: any Decoder) throws {
            \(raw: container)\(raw: reads.joined(separator: "\n"))
            }
            """
    }

    private static func encoder(_ members: [StoredMember], _ access: String) -> DeclSyntax {
        let writes = members.map { member -> String in
            if member.isFlattened { return "    try self.\(member.name).encode(to: encoder)" }
            // An optional is written as null when nil: the keys never come and go.
            return "    try container.encode(self.\(member.name), forKey: SystemKit.TaggedEventKey(\"\(member.key)\"))"
        }
        let container =
            members.contains { !$0.isFlattened }
            ? "    var container = encoder.container(keyedBy: SystemKit.TaggedEventKey.self)\n" : ""
        return """
            \(raw: access)func encode(to encoder: any Encoder) throws {
            \(raw: container)\(raw: writes.joined(separator: "\n"))
            }
            """
    }

    /// `appendStateJSON(to:)`: the struct's JSON as `encodeState` writes it, its members in the order of their keys'
    /// UTF-8 bytes with the keys as literal bytes, each value through `SystemKit.StateJSON`; an optional left out
    /// when nil (synthesized coding) or written as null (stable coding). Nil when only the general way can promise
    /// those bytes whatever the values: no members, a flattened one, keys that are not plain ASCII identifiers or
    /// that repeat.
    static func stateWriter(_ members: [StoredMember], access: String, stable: Bool) -> DeclSyntax? {
        let keys = members.map(\.key)
        guard !members.isEmpty, !members.contains(where: \.isFlattened), members.allSatisfy(\.isPlainStorage),
            keys.allSatisfy(isPlainName), Set(keys).count == keys.count
        else { return nil }
        let sorted = members.sorted { Array($0.key.utf8).lexicographicallyPrecedes(Array($1.key.utf8)) }
        // Synthesized coding leaves a nil optional out: whether a comma comes before a member is then known only
        // as the members are written, and a flag says it (needed only once a member may or may not have been).
        let omitted = sorted.map { !stable && $0.type.wrappedOptional != nil }
        var checks: [Bool] = []  // whether the member before which a comma may or may not come
        var maybe = false
        var surely = false
        for omittable in omitted {
            checks.append(maybe && !surely)
            if omittable { maybe = maybe || !surely } else { surely = true }
        }
        var lines = ["    bytes.append(UInt8(ascii: \"{\"))"]
        if checks.contains(true) { lines.append("    var comma = false") }
        maybe = false
        surely = false
        for (index, (member, omittable)) in zip(sorted, omitted).enumerated() {
            let indent = omittable ? "        " : "    "
            var body: [String] = []
            if surely {
                body.append("bytes.append(contentsOf: #\",\"\(member.key)\":\"#.utf8)")
            } else {
                if maybe { body.append("if comma { bytes.append(UInt8(ascii: \",\")) }") }
                body.append("bytes.append(contentsOf: #\"\"\(member.key)\":\"#.utf8)")
            }
            if !surely && checks[(index + 1)...].contains(true) { body.append("comma = true") }
            // A present optional is bound as `present`, never by the member's own name, which could hide `bytes`.
            let value = omittable || (stable && member.type.wrappedOptional != nil) ? "present" : "self.\(member.name)"
            let append = "guard SystemKit.StateJSON.append(\(value), to: &bytes) else { return false }"
            if omittable {
                lines.append("    if let present = self.\(member.name) {")
                lines += (body + [append]).map { indent + $0 }
                lines.append("    }")
                maybe = maybe || !surely
            } else if member.type.wrappedOptional != nil {
                // Stable coding writes a nil optional as null.
                lines += body.map { indent + $0 }
                lines.append("    if let present = self.\(member.name) {")
                lines.append("        \(append)")
                lines.append("    } else {")
                lines.append("        bytes.append(contentsOf: \"null\".utf8)")
                lines.append("    }")
                surely = true
            } else {
                lines += (body + [append]).map { indent + $0 }
                surely = true
            }
        }
        lines.append("    bytes.append(UInt8(ascii: \"}\"))")
        lines.append("    return true")
        return """
            /// The value's JSON as the host writes a state, without an encoder (`SystemKit.StateJSONWritable`).
            \(raw: access)func appendStateJSON(to bytes: inout [UInt8]) -> Bool {
            \(raw: lines.joined(separator: "\n"))
            }
            """
    }

    /// Whether `name` is written in JSON as it is, under any escaping style: ASCII letters, digits and `_`.
    static func isPlainName(_ name: String) -> Bool {
        !name.isEmpty
            && name.utf8.allSatisfy { byte in
                (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
                    || byte == 0x5F
            }
    }
}

extension VariableDeclSyntax {
    /// No attribute but `@Flattened` and no modifier but access: a property that synthesized `Codable` writes as the
    /// value of its declared type.
    var hasPlainStorage: Bool {
        let attributes = attributes.compactMap { $0.as(AttributeSyntax.self)?.attributeName.trimmedDescription }
        let access: Set<String> = ["public", "package", "internal", "fileprivate", "private", "open"]
        return attributes.allSatisfy { $0 == "Flattened" }
            && modifiers.allSatisfy { access.contains($0.name.text) }
    }
}
