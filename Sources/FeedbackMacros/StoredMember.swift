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
                        isFlattened: flattened != nil
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
}
