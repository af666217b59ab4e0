import ConformanceChecks
import FeedbackJSON
import Synchronization
import SystemKit
import Testing

/// Every state the tests of a suite marked `.statesFitTheirSchemas` reach (through `reduceAndNote` or `firstState`),
/// checked when the suite ends against its system's published schema (`stateSchema`, what `@FeedbackSchema`
/// derived) by a validator that is not ours (Python's `jsonschema`).
final class ReachedStates: Sendable {
    /// The suite's log, while one runs.
    @TaskLocal static var current: ReachedStates?

    private struct Group {
        var schema: JSONValue
        var states: [JSONValue]
    }

    private let groups = Mutex<[String: Group]>([:])

    /// Notes `state` in the running suite's log (nothing outside one).
    static func note<State: Encodable>(_ state: State) {
        guard let current, let described = State.self as? any JSONSchemaDescribing.Type,
            let json = try? JSONValue(encoding: state)
        else { return }
        current.groups.withLock { groups in
            groups[String(reflecting: State.self), default: Group(schema: described.jsonSchema.document, states: [])]
                .states.append(json)
        }
    }

    struct Mismatch: Error, CustomStringConvertible {
        let description: String
    }

    /// Throws the states that do not fit, or when none was noted.
    func check() throws {
        let noted = groups.withLock { $0 }
        let (checked, failures) = try JSONSchemaValidator.validate(
            noted.sorted { $0.key < $1.key }.map {
                .init(label: $0.key, schema: $0.value.schema, instances: $0.value.states)
            }
        )
        guard failures.isEmpty else { throw Mismatch(description: "reached states that do not fit: \(failures)") }
        guard checked > 0 else { throw Mismatch(description: "the suite noted no state") }
    }
}

/// Checks, once its tests ran, every state a suite's tests reached against the published state schemas.
struct StatesFitTheirSchemas: SuiteTrait, TestScoping {
    var isRecursive: Bool { false }

    func provideScope(
        for test: Test,
        testCase: Test.Case?,
        performing function: @Sendable () async throws -> Void
    ) async throws {
        let reached = ReachedStates()
        try await ReachedStates.$current.withValue(reached) { try await function() }
        try reached.check()
    }
}

extension Trait where Self == StatesFitTheirSchemas {
    /// Every state the suite's tests reach fits its system's published schema.
    static var statesFitTheirSchemas: Self { Self() }
}

extension FeedbackSystem {
    /// `reduce`, noting the state reached (`ReachedStates`).
    static func reduceAndNote(_ state: inout State, _ event: Event) {
        reduce(&state, event)
        ReachedStates.note(state)
    }
}

/// The check is not vacuous: a state that does not fit its schema is found, and so is a suite that noted nothing.
@Suite struct ReachedStatesTests {
    struct Mislabeled: Encodable, JSONSchemaDescribing {
        var count = "seven"
        static var jsonSchema: JSONSchema { .object([JSONSchema.Property("count", .of(Int.self), required: true)]) }
    }

    @Test func aStateThatDoesNotFitItsSchemaIsFound() throws {
        let reached = ReachedStates()
        ReachedStates.$current.withValue(reached) { ReachedStates.note(Mislabeled()) }
        #expect(throws: ReachedStates.Mismatch.self) { try reached.check() }
        #expect(throws: ReachedStates.Mismatch.self) { try ReachedStates().check() }
    }
}
