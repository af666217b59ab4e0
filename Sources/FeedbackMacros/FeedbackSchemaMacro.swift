import SwiftDiagnostics
public import SwiftSyntax
import SwiftSyntaxBuilder
public import SwiftSyntaxMacros

/// `@FeedbackSchema` on a state and the types it contains derives the JSON Schema of what their synthesized
/// `Codable` writes: a struct's stored properties (their `CodingKeys` names when it declares them; optionals may be
/// left out or null), an enum's String raw values. It conforms the type to `JSONSchemaDescribing`.
public struct FeedbackSchemaMacro: MemberMacro, ExtensionMacro {
    public static func expansion(
        of node: AttributeSyntax,
        providingMembersOf declaration: some DeclGroupSyntax,
        conformingTo protocols: [TypeSyntax],
        in context: some MacroExpansionContext
    ) throws -> [DeclSyntax] {
        switch schema(of: declaration, at: node) {
        case .failure(let problems):
            problems.list.forEach(context.diagnose)
            return []
        case .success(let expression):
            return [
                """
                /// The JSON Schema of this type's JSON, derived from its declaration.
                \(raw: declaration.memberAccess)static var jsonSchema: SystemKit.JSONSchema { \(raw: expression) }
                """
            ]
        }
    }

    public static func expansion(
        of node: AttributeSyntax,
        attachedTo declaration: some DeclGroupSyntax,
        providingExtensionsOf type: some TypeSyntaxProtocol,
        conformingTo protocols: [TypeSyntax],
        in context: some MacroExpansionContext
    ) throws -> [ExtensionDeclSyntax] {
        guard !protocols.isEmpty, case .success = schema(of: declaration, at: node) else { return [] }
        return [try ExtensionDeclSyntax("extension \(type.trimmed): SystemKit.JSONSchemaDescribing {}")]
    }

    /// The expression of the declaration's schema, or why there is none.
    private static func schema(
        of declaration: some DeclGroupSyntax,
        at node: AttributeSyntax
    ) -> Result<String, EventCase.Problems> {
        if let structDecl = declaration.as(StructDeclSyntax.self) { return objectSchema(of: structDecl) }
        if let enumDecl = declaration.as(EnumDeclSyntax.self) { return stringsSchema(of: enumDecl, at: node) }
        return .failure(.init(list: [MacroProblem.schemaOnUnsupportedType.at(node)]))
    }

    private static func objectSchema(of declaration: StructDeclSyntax) -> Result<String, EventCase.Problems> {
        let members = declaration.memberBlock.members
        for member in members {
            guard let function = member.decl.as(FunctionDeclSyntax.self),
                function.name.text == "encode"
            else { continue }
            return .failure(.init(list: [MacroProblem.schemaCustomCoding.at(function.name)]))
        }
        for member in members {
            guard let initializer = member.decl.as(InitializerDeclSyntax.self),
                initializer.signature.parameterClause.parameters.first?.firstName.text == "from"
            else { continue }
            return .failure(.init(list: [MacroProblem.schemaCustomCoding.at(initializer.initKeyword)]))
        }
        let keys = codingKeys(in: members)
        var properties: [String] = []
        var problems: [Diagnostic] = []
        for member in members {
            guard let variable = member.decl.as(VariableDeclSyntax.self), !variable.isStatic else { continue }
            var followingType: TypeSyntax?
            var entries: [String] = []
            for binding in variable.bindings.reversed() {
                if let annotation = binding.typeAnnotation { followingType = annotation.type }
                guard let name = binding.pattern.as(IdentifierPatternSyntax.self)?.identifier.text,
                    binding.isStored
                else { continue }
                // A `let` with a value is never decoded: synthesized `Codable` leaves it out.
                if variable.bindingSpecifier.tokenKind == .keyword(.let) && binding.initializer != nil { continue }
                guard let type = binding.typeAnnotation?.type ?? (binding.initializer == nil ? followingType : nil)
                else {
                    problems.append(MacroProblem.schemaUntypedProperty.at(binding.pattern))
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
                    "SystemKit.JSONSchema.Property(\"\(key)\", SystemKit.JSONSchema.of(\(type.metatype)), "
                        + "required: \(type.wrappedOptional == nil))"
                )
            }
            properties += entries.reversed()
        }
        guard problems.isEmpty else { return .failure(.init(list: problems)) }
        return .success("SystemKit.JSONSchema.object([\(properties.joined(separator: ", "))])")
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

    private static func stringsSchema(
        of declaration: EnumDeclSyntax,
        at node: AttributeSyntax
    ) -> Result<String, EventCase.Problems> {
        let inherited = declaration.inheritanceClause?.inheritedTypes.map(\.type.trimmedDescription) ?? []
        guard inherited.contains("String") else {
            return .failure(.init(list: [MacroProblem.schemaEnumWithoutStrings.at(declaration.name)]))
        }
        let values = declaration.memberBlock.members.compactMap { $0.decl.as(EnumCaseDeclSyntax.self) }
            .flatMap(\.elements)
            .map { "\"\($0.stringRawValue ?? $0.name.text)\"" }
        return .success("SystemKit.JSONSchema.strings([\(values.joined(separator: ", "))])")
    }
}

extension VariableDeclSyntax {
    var isStatic: Bool {
        modifiers.contains { [.keyword(.static), .keyword(.class)].contains($0.name.tokenKind) }
    }
}

extension PatternBindingSyntax {
    /// Whether the binding stores a value: no accessors, or only observers.
    var isStored: Bool {
        guard let accessorBlock else { return true }
        guard case .accessors(let accessors) = accessorBlock.accessors else { return false }
        return accessors.allSatisfy {
            [.keyword(.willSet), .keyword(.didSet)].contains($0.accessorSpecifier.tokenKind)
        }
    }
}

extension EnumCaseElementSyntax {
    /// The case's raw value when it is a plain string literal.
    var stringRawValue: String? {
        guard let literal = rawValue?.value.as(StringLiteralExprSyntax.self),
            literal.segments.count == 1,
            let segment = literal.segments.first?.as(StringSegmentSyntax.self)
        else { return nil }
        return segment.content.text
    }
}
