import CurlClient
import FeedbackLoop
import FeedbackService
import Foundation
import Logging
import SystemKit
import Upstream

/// An upstream that must not be called: these systems fetch nothing.
struct NoUpstream: UpstreamFetching {
    struct Called: Error {}
    func fetch(_ request: UpstreamRequest) async throws -> UpstreamResponse { throw Called() }
}

/// A wall time for tests to start at: 2026-01-01T00:00:00Z.
let testOrigin = WallTime(millisecondsSince1970: 1_767_225_600_000)

/// The environment of a system under test: `clock`, and a wall time that starts at `origin` and moves with it.
func environment(_ clock: TestClock, origin: WallTime = testOrigin) -> SystemEnvironment {
    SystemEnvironment(
        clock: clock,
        wallClock: .following(clock, from: origin),
        upstream: NoUpstream(),
        logger: Logger(label: "SystemsTests")
    )
}

/// Waits for the first state of `loop` that satisfies `predicate` (the current one included), noting every state it
/// sees (`ReachedStates`).
@discardableResult
func firstState<State: Sendable & Encodable, Event: Sendable>(
    of loop: Loop<State, Event>,
    where predicate: (State) -> Bool
) async -> State? {
    for await state in loop.states {
        ReachedStates.note(state)
        if predicate(state) { return state }
    }
    return nil
}

func decode<Event: Decodable>(_ type: Event.Type, _ json: String) throws -> Event {
    try JSONDecoder().decode(Event.self, from: Data(json.utf8))
}

func encode(_ value: some Encodable) throws -> String {
    let encoder = JSONEncoder()
    encoder.outputFormatting = .sortedKeys
    return String(decoding: try encoder.encode(value), as: UTF8.self)
}
