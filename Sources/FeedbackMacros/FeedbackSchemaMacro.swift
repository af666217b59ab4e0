import SwiftDiagnostics
public import SwiftSyntax
import SwiftSyntaxBuilder
public import SwiftSyntaxMacros

/// `@FeedbackSchema` on a state and the types it contains derives the JSON Schema of their JSON and conforms them to
/// `JSONSchemaDescribing`:
/// - a struct with synthesized `Codable`: its stored properties (their `CodingKeys` names when it declares them;
///   optionals may be left out or null); a generic one describes its JSON where its type parameters do;
/// - `@FeedbackSchema(coding: .stable)` on a struct: the macro writes its coding too (every member written, nil as
///   null; a member left out reads as its default value; `@Flattened` members written beside the others);
/// - `@FeedbackSchema(tag: "kind")` on an enum: its coding as an object tagged by that member, as events are by
///   `"type"` (`TaggedValue`);
/// - an enum with String raw values: the values.
public struct FeedbackSchemaMacro: MemberMacro, ExtensionMacro {
    public static func expansion(
        of node: AttributeSyntax,
        providingMembersOf declaration: some DeclGroupSyntax,
        conformingTo protocols: [TypeSyntax],
        in context: some MacroExpansionContext
    ) throws -> [DeclSyntax] {
        switch derive(declaration, at: node) {
        case .failure(let problems):
            problems.list.forEach(context.diagnose)
            return []
        case .success(let derived):
            var members = derived.coding
            if let schema = derived.schema, derived.constraints.isEmpty {
                members.insert(schemaMember(declaration.memberAccess, schema), at: 0)
            }
            return members
        }
    }

    public static func expansion(
        of node: AttributeSyntax,
        attachedTo declaration: some DeclGroupSyntax,
        providingExtensionsOf type: some TypeSyntaxProtocol,
        conformingTo protocols: [TypeSyntax],
        in context: some MacroExpansionContext
    ) throws -> [ExtensionDeclSyntax] {
        guard !protocols.isEmpty, case .success(let derived) = derive(declaration, at: node) else { return [] }
        guard let schema = derived.schema, !derived.constraints.isEmpty else {
            var conformances = derived.conformance
            if derived.writesItself, protocols.contains(where: { $0.trimmedDescription.hasSuffix("StateJSONWritable") })
            {
                conformances += ", SystemKit.StateJSONWritable"
            }
            return [try ExtensionDeclSyntax("extension \(type.trimmed): \(raw: conformances) {}")]
        }
        // A generic type's schema is its parameters' schemas: it describes its JSON where they do.
        let clause = derived.constraints.map { "\($0): SystemKit.JSONSchemaDescribing" }.joined(separator: ", ")
        return [
            try ExtensionDeclSyntax(
                """
                extension \(type.trimmed): \(raw: derived.conformance) where \(raw: clause) {
                \(schemaMember(declaration.memberAccess, schema))
                }
                """
            )
        ]
    }

    private static func schemaMember(_ access: String, _ expression: String) -> DeclSyntax {
        """
        /// The JSON Schema of this type's JSON, derived from its declaration.
        \(raw: access)static var jsonSchema: SystemKit.JSONSchema { \(raw: expression) }
        """
    }

    /// What the macro writes for a declaration.
    struct Derivation {
        /// The expression of `jsonSchema`; nil when the conformance provides it (`TaggedValue`).
        var schema: String?
        /// Derived coding members (`init(from:)`, `encode(to:)`, a tagged enum's `tagKey` and `taggedCases`).
        var coding: [DeclSyntax] = []
        /// The protocol the extension conforms the type to.
        var conformance = "SystemKit.JSONSchemaDescribing"
        /// A generic type's parameters, each of which must describe its JSON for the type to.
        var constraints: [String] = []
        /// Whether the coding members include `appendStateJSON(to:)` (conformance to `StateJSONWritable`).
        var writesItself = false
    }

    /// What the attribute's arguments ask for.
    enum Request {
        case synthesized
        case stable
        case tagged(String)

        var isStable: Bool {
            if case .stable = self { return true }
            return false
        }
    }

    private static func derive(
        _ declaration: some DeclGroupSyntax,
        at node: AttributeSyntax
    ) -> Result<Derivation, EventCase.Problems> {
        let request = request(of: node)
        if let structDecl = declaration.as(StructDeclSyntax.self) {
            if case .tagged = request {
                return .failure(.init(list: [MacroProblem.schemaTagOnStruct.at(node)]))
            }
            let stable = request.isStable
            return StoredMember.read(structDecl, stable: stable).map { members in
                var derived = StoredMember.derivation(members, access: structDecl.memberAccess, stable: stable)
                derived.constraints = structDecl.genericParameterClause?.parameters.map(\.name.text) ?? []
                // A generic struct's members are written through their parameters' encoders: no writer of its own.
                if derived.constraints.isEmpty,
                    let writer = StoredMember.stateWriter(members, access: structDecl.memberAccess, stable: stable)
                {
                    derived.coding.append(writer)
                    derived.writesItself = true
                }
                return derived
            }
        }
        if let enumDecl = declaration.as(EnumDeclSyntax.self) {
            switch request {
            case .stable: return .failure(.init(list: [MacroProblem.schemaCodingOnEnum.at(node)]))
            case .tagged(let tag): return taggedEnum(enumDecl, tag: tag)
            case .synthesized: return stringsSchema(of: enumDecl, at: node)
            }
        }
        return .failure(.init(list: [MacroProblem.schemaOnUnsupportedType.at(node)]))
    }

    private static func request(of node: AttributeSyntax) -> Request {
        guard case .argumentList(let arguments)? = node.arguments else { return .synthesized }
        for argument in arguments {
            switch argument.label?.text {
            case "tag":
                if let literal = argument.expression.as(StringLiteralExprSyntax.self),
                    let segment = literal.segments.first?.as(StringSegmentSyntax.self), literal.segments.count == 1
                {
                    return .tagged(segment.content.text)
                }
            case "coding":
                if argument.expression.as(MemberAccessExprSyntax.self)?.declName.baseName.text == "stable" {
                    return .stable
                }
            default: continue
            }
        }
        return .synthesized
    }

    private static func taggedEnum(
        _ declaration: EnumDeclSyntax,
        tag: String
    ) -> Result<Derivation, EventCase.Problems> {
        let (cases, problems) = EventCase.read(declaration, tag: tag)
        guard problems.isEmpty else { return .failure(.init(list: problems)) }
        let access = declaration.memberAccess
        let coding = TaggedCoding(kind: .value(tag: tag), cases: cases, access: access)
        let tagKey: DeclSyntax = """
            /// The member naming the case.
            \(raw: access)static var tagKey: String { "\(raw: tag)" }
            """
        return .success(
            Derivation(
                schema: nil,
                coding: [tagKey, coding.casesMember(), coding.decoder(), coding.encoder()],
                conformance: "SystemKit.TaggedValue"
            )
        )
    }

    private static func stringsSchema(
        of declaration: EnumDeclSyntax,
        at node: AttributeSyntax
    ) -> Result<Derivation, EventCase.Problems> {
        let elements = declaration.memberBlock.members.compactMap { $0.decl.as(EnumCaseDeclSyntax.self) }
            .flatMap(\.elements)
        if let withPayload = elements.first(where: { !($0.parameterClause?.parameters.isEmpty ?? true) }) {
            var tagged = node
            tagged.leftParen = .leftParenToken()
            tagged.arguments = .argumentList(
                [LabeledExprSyntax(label: "tag", expression: StringLiteralExprSyntax(content: "type"))]
            )
            tagged.rightParen = .rightParenToken()
            let fix = FixIt(
                message: MacroProblem.Fix(message: "tag its cases with \"type\""),
                changes: [.replace(oldNode: Syntax(node), newNode: Syntax(tagged))]
            )
            return .failure(.init(list: [MacroProblem.schemaEnumWithPayloads.at(withPayload, fixIts: [fix])]))
        }
        let inherited = declaration.inheritanceClause?.inheritedTypes.map(\.type.trimmedDescription) ?? []
        guard inherited.contains("String") else {
            return .failure(.init(list: [MacroProblem.schemaEnumWithoutStrings.at(declaration.name)]))
        }
        let values = elements.map { "\"\($0.stringRawValue ?? $0.name.text)\"" }
        return .success(Derivation(schema: "SystemKit.JSONSchema.strings([\(values.joined(separator: ", "))])"))
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
