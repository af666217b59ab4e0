import FeedbackJSON
import Foundation
import Systems
import Testing

@testable import SystemKit

/// Every built-in system's states, random ones included, encode to the same bytes through `encodeState` (the
/// `StateWriter`) as through `JSONEncoder` with the canonical options; and the writer, not its fallback, wrote them.
@Suite(.timeLimit(.minutes(1)))
struct StateEncodingTests {
    private func expectCanonical<System: FeedbackSystem>(
        _ system: System.Type,
        _ states: [System.State],
        sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        for state in states {
            let expected = try StateWriterTests.reference(state)
            #expect(try StateWriter.write(state) == expected, sourceLocation: sourceLocation)
            #expect(System.encodeState(state) == expected, sourceLocation: sourceLocation)
        }
    }

    private static func time(_ random: inout SeededRandom) -> WallTime? {
        Bool.random(using: &random)
            ? nil : WallTime(millisecondsSince1970: Int64.random(in: -1_000_000...4_102_444_800_000, using: &random))
    }

    @Test func counterStates() throws {
        var random = SeededRandom(seed: 1)
        let states = [Int.min, Int.max, 0, -1] + (0..<500).map { _ in Int(bitPattern: UInt(random.next())) }
        try expectCanonical(CounterSystem.self, states.map { CounterSystem.State(count: $0) })
    }

    @Test func catchStates() throws {
        var random = SeededRandom(seed: 2)
        let states = (0..<500).map { _ in
            CatchSystem.State(
                holder: Bool.random(using: &random) ? .human : .machine,
                throwCount: Int.random(in: 0...Int.max, using: &random),
                throwBackAt: Self.time(&random)
            )
        }
        try expectCanonical(CatchSystem.self, [CatchSystem().initialState] + states)
    }

    @Test func trafficLightStates() throws {
        var random = SeededRandom(seed: 3)
        let states = (0..<500).map { _ in
            TrafficLightSystem.State(
                phase: TrafficLightSystem.State.Phase.allCases.randomElement(using: &random)!,
                running: Bool.random(using: &random),
                changes: Int.random(in: 0...1_000_000, using: &random),
                deadline: Self.time(&random)
            )
        }
        try expectCanonical(TrafficLightSystem.self, [TrafficLightSystem().initialState] + states)
    }

    @Test func pagingStates() throws {
        var random = SeededRandom(seed: 4)
        func optional(_ text: String) -> String? { Bool.random(using: &random) ? nil : text }
        let statuses: [PagingSystem.State.Status] = [
            .idle, .loading, .exhausted, .failed(message: "upstream said 503"),
        ]
        let states = (0..<300).map { _ in
            PagingSystem.State(
                query: random.string(),
                items: (0..<Int.random(in: 0...12, using: &random)).map { _ in random.jsonValue(depth: 3) },
                nextPage: optional("http://127.0.0.1:8080/demo/catalog?q=a&page=2"),
                status: statuses.randomElement(using: &random)!,
                pagesLoaded: Int.random(in: 0...100, using: &random),
                total: Bool.random(using: &random) ? nil : Int.random(in: 0...100_000, using: &random),
                generation: Int.random(in: 0...50, using: &random),
                retries: Int.random(in: 0...5, using: &random),
                lastError: optional(random.string()),
                endReason: optional(random.string()),
                visited: (0..<Int.random(in: 0...4, using: &random)).map { _ in random.string() }
            )
        }
        try expectCanonical(PagingSystem.self, [PagingSystem().initialState] + states)
    }

    /// Events as the journal writes them: JSONEncoder's bytes where they are one object member each; with several
    /// members (whose order JSONEncoder changes from one process to the next) the same JSON in the order encoded.
    @Test func eventsOfEverySystem() throws {
        func check<System: FeedbackSystem>(_ system: System, _ events: [System.Event]) throws {
            for event in system.exampleEvents + events {
                let expected = Array(try JSONEncoder().encode(event))
                let encoded = try System.encodeEvent(event)
                #expect(try JSONValue(parsing: encoded) == JSONValue(parsing: expected))
                // The writer's own bytes, never JSONEncoder's fallback.
                #expect(try StateWriter.write(event, options: .plain) == encoded)
                if !(try JSONValue(parsing: expected)).hasObjectOfSeveralMembers {
                    #expect(encoded == expected)
                }
            }
        }
        let at = WallTime(millisecondsSince1970: 1_767_225_600_000)
        try check(CounterSystem(), [.increment, .decrement, .add(amount: -3)])
        try check(CatchSystem(), [.throwToMachine, .schedule(until: at), .throwToHuman])
        try check(TrafficLightSystem(), [.start, .stop, .schedule(until: at), .advance(next: at), .advance(next: nil)])
        try check(PagingSystem(), [])
        try check(ReminderSystem(), [.remind(text: "a/b", seconds: 3), .schedule(due: at), .fire])
    }

    @Test func aTestSystemsStatesToo() throws {
        var random = SeededRandom(seed: 5)
        let states = (0..<300).map { _ in
            ReminderSystem.State(
                pending: Bool.random(using: &random)
                    ? nil
                    : ReminderSystem.Reminder(
                        text: random.string(),
                        seconds: Int.random(in: 0...86_400, using: &random),
                        due: Self.time(&random)
                    ),
                fired: (0..<Int.random(in: 0...3, using: &random)).map { _ in random.string() }
            )
        }
        try expectCanonical(ReminderSystem.self, states)
    }
}
