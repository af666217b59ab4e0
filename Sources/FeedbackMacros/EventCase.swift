import SwiftDiagnostics
import SwiftSyntax

/// One case of a `@FeedbackEvent` enum as the macro reads it: its wire name, whether clients may post it, and how its
/// payload goes on the wire.
struct EventCase {
    /// How the case's associated values are written beside `"type"`.
    enum Payload {
        /// No associated values: `{"type":"increment"}`.
        case none
        /// Labeled values, one JSON field per label: `{"type":"add","amount":5}`.
        case fields([Field])
        /// One unlabeled value whose own fields are written beside `"type"`: `{"type":"pageLoaded","url":…}`.
        case flattened(TypeSyntax)
    }

    /// A labeled associated value.
    struct Field {
        let name: String
        let type: TypeSyntax
        /// The default value of the case's parameter: the field may be left out, and then reads as it.
        var defaultValue: ExprSyntax? = nil
        /// `T?`: written only when present, and may be left out.
        var isOptional: Bool { type.wrappedOptional != nil }
        /// Whether the field must be present.
        var isRequired: Bool { !isOptional && defaultValue == nil }
    }

    let name: String
    let isEffect: Bool
    let payload: Payload
    let node: EnumCaseElementSyntax

    /// The cases of `declaration` with their problems; a case with a problem is left out. `tag` is the member that
    /// names the case (`type` for events).
    static func read(
        _ declaration: EnumDeclSyntax,
        tag: String = "type"
    ) -> (cases: [EventCase], problems: [Diagnostic]) {
        var cases: [EventCase] = []
        var problems: [Diagnostic] = []
        var seen: [String: EnumCaseElementSyntax] = [:]
        for member in declaration.memberBlock.members {
            guard let caseDecl = member.decl.as(EnumCaseDeclSyntax.self) else { continue }
            let isEffect = caseDecl.attributes.contains { attribute in
                attribute.as(AttributeSyntax.self)?.attributeName.trimmedDescription == "Effect"
            }
            for element in caseDecl.elements {
                let name = element.name.text
                if seen[name] != nil {
                    problems.append(
                        MacroProblem.duplicateWireName.at(
                            element.name,
                            "another case is already written as {\"\(tag)\":\"\(name)\"}: each case needs a name of its own"
                        )
                    )
                    continue
                }
                seen[name] = element
                switch payload(of: element, tag: tag) {
                case .success(let payload):
                    cases.append(EventCase(name: name, isEffect: isEffect, payload: payload, node: element))
                case .failure(let found):
                    problems += found.list
                }
            }
        }
        return (cases, problems)
    }

    struct Problems: Error { let list: [Diagnostic] }

    private static func payload(of element: EnumCaseElementSyntax, tag: String) -> Result<Payload, Problems> {
        guard let parameters = element.parameterClause?.parameters, !parameters.isEmpty else { return .success(.none) }
        var problems: [Diagnostic] = []
        for parameter in parameters {
            if let reason = parameter.type.notCodableReason {
                problems.append(
                    MacroProblem.notCodable.at(parameter.type, "\(reason): this payload cannot be written as JSON")
                )
            }
        }
        let labels = parameters.map { parameter -> String? in
            guard let label = parameter.firstName, label.tokenKind != .wildcard else { return nil }
            return label.text
        }
        if labels.allSatisfy({ $0 == nil }) && parameters.count == 1 {
            let type = parameters.first!.type
            if type.isScalarOrCollection {
                problems.append(
                    MacroProblem.unlabeledScalar.at(
                        type,
                        fixIts: [Self.labelFix(parameters, names: ["value"], "label it \"value\"")]
                    )
                )
            }
            return problems.isEmpty ? .success(.flattened(type.trimmed)) : .failure(Problems(list: problems))
        }
        if labels.contains(where: { $0 == nil }) {
            let names = parameters.enumerated().map { index, parameter in
                labels[index] ?? "field\(index + 1)"
            }
            problems.append(
                MacroProblem.unlabeledFields.at(
                    element,
                    fixIts: [Self.labelFix(parameters, names: names, "label the fields")]
                )
            )
            return .failure(Problems(list: problems))
        }
        for (parameter, label) in zip(parameters, labels) where label == tag {
            let words = "\"\(tag)\" is the tag on the wire; a field cannot have that name"
            problems.append(MacroProblem.fieldNamedType.at(parameter.firstName!, tag == "type" ? nil : words))
        }
        guard problems.isEmpty else { return .failure(Problems(list: problems)) }
        return .success(
            .fields(
                zip(parameters, labels).map {
                    Field(name: $1!, type: $0.type.trimmed, defaultValue: $0.defaultValue?.value.trimmed)
                }
            )
        )
    }

    /// A fix-it that labels every unlabeled parameter with its name in `names`.
    private static func labelFix(
        _ parameters: EnumCaseParameterListSyntax,
        names: [String],
        _ message: String
    ) -> FixIt {
        var changes: [FixIt.Change] = []
        for (index, parameter) in parameters.enumerated() {
            let hasLabel = parameter.firstName.map { $0.tokenKind != .wildcard } ?? false
            guard !hasLabel else { continue }
            var labeled = parameter
            labeled.firstName = .identifier(names[index])
            labeled.secondName = nil
            labeled.colon = .colonToken(trailingTrivia: .space)
            labeled.type = parameter.type.with(\.leadingTrivia, [])
            changes.append(.replace(oldNode: Syntax(parameter), newNode: Syntax(labeled)))
        }
        return FixIt(message: MacroProblem.Fix(message: message), changes: changes)
    }
}

extension TypeSyntax {
    /// The wrapped type of `T?`, `T!` or `Optional<T>`; nil for any other type.
    var wrappedOptional: TypeSyntax? {
        if let optional = self.as(OptionalTypeSyntax.self) { return optional.wrappedType }
        if let implicit = self.as(ImplicitlyUnwrappedOptionalTypeSyntax.self) { return implicit.wrappedType }
        if let identifier = self.as(IdentifierTypeSyntax.self), identifier.name.text == "Optional",
            let argument = identifier.genericArgumentClause?.arguments.first
        {
            return TypeSyntax(argument.argument.as(TypeSyntax.self))
        }
        return nil
    }

    /// Why a value of this type has no JSON at all, when that shows in its spelling (a function, a tuple, `Any`, an
    /// existential): nil when it may be `Codable` (the compiler checks the rest).
    var notCodableReason: String? {
        if self.is(FunctionTypeSyntax.self) { return "a function" }
        if let attributed = self.as(AttributedTypeSyntax.self) { return attributed.baseType.notCodableReason }
        if let tuple = self.as(TupleTypeSyntax.self) {
            if tuple.elements.count == 1, let only = tuple.elements.first { return only.type.notCodableReason }
            return "a tuple"
        }
        if self.is(SomeOrAnyTypeSyntax.self) { return "an existential" }
        if let identifier = self.as(IdentifierTypeSyntax.self), ["Any", "AnyObject"].contains(identifier.name.text) {
            return "\(identifier.name.text)"
        }
        if let wrapped = wrappedOptional { return wrapped.notCodableReason }
        if let array = self.as(ArrayTypeSyntax.self) { return array.element.notCodableReason }
        if let dictionary = self.as(DictionaryTypeSyntax.self) { return dictionary.value.notCodableReason }
        return nil
    }

    /// A type whose JSON is not an object: a number, a string, a Boolean, an array, an optional.
    var isScalarOrCollection: Bool {
        if wrappedOptional != nil || self.is(ArrayTypeSyntax.self) { return true }
        guard let identifier = self.as(IdentifierTypeSyntax.self) else { return false }
        let scalars: Set<String> = [
            "Int", "Int8", "Int16", "Int32", "Int64", "UInt", "UInt8", "UInt16", "UInt32", "UInt64", "Double", "Float",
            "Bool", "String", "Array", "Set", "WallTime",
        ]
        return scalars.contains(identifier.name.text)
    }
}
