import FeedbackJSON
public import FeedbackLoop
public import SystemKit

/// Replays a `SessionFixture` (a session exported by `GET /v1/sessions/{id}/export`) through a system of this build
/// in `swift test`: the fixture's base state and events, upcast by the system's migrations when older, are sent to a
/// loop of the system's pure reducer, one at a time, in virtual time (a `TestClock` advanced by the journaled gap
/// before each event); every state is encoded as the host encodes it and checked against the journaled checksum of
/// that revision, and every checkpoint byte for byte. Effects do not run again: their journaled results are among
/// the events, which is what makes the replay deterministic.
///
/// ```swift
/// @Test func sessionThatMisbehavedInProduction() async throws {
///     let fixture = try SessionFixture(json: JSONValue(parsing: Array(exportedBytes)))
///     let replay = try await FixtureReplay.replay(fixture, through: CounterSystem())
///     #expect(replay.finalState.count == 12)
/// }
/// ```
public enum FixtureReplay {
    /// What a replay went through.
    public struct Outcome<System: FeedbackSystem>: Sendable {
        /// Every state after `base`, with its revision, in order.
        public var states: [(revision: UInt64, state: System.State)]
        /// The state after the last event (the base state when there is none).
        public var finalState: System.State
        /// States checked against a journaled checksum, and checkpoints checked byte for byte.
        public var checkedChecksums: Int
        public var checkedCheckpoints: Int
        /// Whether a record was of an older schema version (and so migrated, not checked by checksum).
        public var migrated: Bool
    }

    /// Replays `fixture` through `system`; throws the first difference (or what did not decode) with its revision.
    public static func replay<System: FeedbackSystem>(
        _ fixture: SessionFixture,
        through system: System,
        clock: TestClock = TestClock()
    ) async throws(FixtureMismatch) -> Outcome<System> {
        guard fixture.system == system.name else {
            throw FixtureMismatch(
                revision: fixture.base.revision,
                "the fixture is of \(fixture.system), not \(system.name)"
            )
        }
        let versions = SchemaVersions(of: system)
        func decode<T: Decodable>(
            _ value: JSONValue,
            _ part: SchemaVersions.Part,
            version: Int,
            revision: UInt64
        ) throws(FixtureMismatch) -> T {
            do {
                return try versions.upcast(value, part, from: version).decode(T.self)
            } catch {
                throw FixtureMismatch(revision: revision, "the \(part.rawValue) does not read: \(error)")
            }
        }
        let base: System.State = try decode(
            fixture.base.state,
            .state,
            version: fixture.base.schemaVersion,
            revision: fixture.base.revision
        )
        var migrated = fixture.base.schemaVersion != versions.current
        let loop = Loop<System.State, System.Event>(
            initial: base,
            revision: fixture.base.revision,
            reduce: System.reduce,
            feedbacks: []
        )
        defer { loop.stop() }
        var outcome = Outcome<System>(
            states: [],
            finalState: base,
            checkedChecksums: 0,
            checkedCheckpoints: 0,
            migrated: migrated
        )
        var checkpoints = fixture.checkpoints[...]
        var time = fixture.events.first?.time
        for recorded in fixture.events {
            if let previous = time, let now = recorded.time, now > previous {
                clock.advance(by: .milliseconds(now - previous))
            }
            time = recorded.time ?? time
            let event: System.Event = try decode(
                recorded.event,
                .event,
                version: recorded.schemaVersion,
                revision: recorded.revision
            )
            migrated = migrated || recorded.schemaVersion != versions.current
            guard let step = await loop.send(contentsOf: [event]), step.revision == recorded.revision else {
                throw FixtureMismatch(revision: recorded.revision, "the loop did not reach this revision")
            }
            let bytes = System.encodeState(step.state)
            if let expected = recorded.stateChecksum, recorded.schemaVersion == versions.current {
                let actual = StateChecksum.of(bytes)
                guard actual == expected else {
                    throw FixtureMismatch(
                        revision: recorded.revision,
                        "the state after event \(recorded.revision) has checksum \(StateChecksum.hex(actual)), the "
                            + "journal's is \(StateChecksum.hex(expected)); the replayed state is "
                            + String(decoding: bytes, as: UTF8.self)
                    )
                }
                outcome.checkedChecksums += 1
            }
            while let checkpoint = checkpoints.first, checkpoint.revision <= recorded.revision {
                checkpoints.removeFirst()
                guard checkpoint.revision == recorded.revision else { continue }
                let kept: System.State = try decode(
                    checkpoint.state,
                    .state,
                    version: checkpoint.schemaVersion,
                    revision: checkpoint.revision
                )
                let keptBytes = System.encodeState(kept)
                guard keptBytes == bytes else {
                    throw FixtureMismatch(
                        revision: recorded.revision,
                        "the state differs from the kept one: journaled "
                            + String(decoding: keptBytes, as: UTF8.self) + ", replayed "
                            + String(decoding: bytes, as: UTF8.self)
                    )
                }
                outcome.checkedCheckpoints += 1
            }
            outcome.states.append((step.revision, step.state))
            outcome.finalState = step.state
        }
        outcome.migrated = migrated
        return outcome
    }
}

/// Where a fixture's replay first differed from what was journaled, or what did not read.
public struct FixtureMismatch: Error, Sendable, CustomStringConvertible {
    /// The revision.
    public var revision: UInt64
    /// What differed, with both sides.
    public var message: String

    init(revision: UInt64, _ message: String) {
        self.revision = revision
        self.message = message
    }

    public var description: String { "at revision \(revision): \(message)" }
}
