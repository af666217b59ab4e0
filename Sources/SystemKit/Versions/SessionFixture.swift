public import FeedbackJSON

/// A session exported as a test (`GET /v1/sessions/{id}/export`): a state to start from, the journaled events after
/// it with who sent them (a client, or an effect: the event's type says which) and when, each with the checksum of
/// the state it produced, and the kept states after the start, byte for byte. `FeedbackTesting` replays it.
///
/// The JSON (`json`, `init(json:)`): `{"fixture": "feedbackhost-session/1", "session", "system", "schemaVersion",
/// "base": {"revision", "schemaVersion", "state"}, "events": [{"revision", "origin", "type", "time",
/// "schemaVersion", "event", "stateChecksum"}], "checkpoints": [{"revision", "schemaVersion", "state"}]}`; `time`
/// is milliseconds since 1970 or null, `stateChecksum` 16 hexadecimal digits (`StateChecksum`) or null when the
/// journal has none (events journaled before schema version 6 of the journal). A value type.
public struct SessionFixture: Sendable, Equatable {
    /// The format's name and version, the `fixture` member.
    public static let format = "feedbackhost-session/1"

    /// A state at a revision, of a schema version.
    public struct State: Sendable, Equatable {
        public var revision: UInt64
        public var schemaVersion: Int
        public var state: JSONValue

        /// Creates a state.
        public init(revision: UInt64, schemaVersion: Int, state: JSONValue) {
            self.revision = revision
            self.schemaVersion = schemaVersion
            self.state = state
        }
    }

    /// One journaled event.
    public struct Event: Sendable, Equatable {
        public var revision: UInt64
        /// `client` or `effect`.
        public var origin: String
        public var time: Int64?
        public var schemaVersion: Int
        public var event: JSONValue
        public var stateChecksum: UInt64?

        /// Creates an event.
        public init(
            revision: UInt64,
            origin: String,
            time: Int64?,
            schemaVersion: Int,
            event: JSONValue,
            stateChecksum: UInt64?
        ) {
            self.revision = revision
            self.origin = origin
            self.time = time
            self.schemaVersion = schemaVersion
            self.event = event
            self.stateChecksum = stateChecksum
        }
    }

    /// The session's id.
    public var session: String
    /// The system's name.
    public var system: String
    /// The system's schema version in the build that exported it.
    public var schemaVersion: Int
    /// Where the replay starts.
    public var base: State
    /// The events after `base`, in revision order without a gap.
    public var events: [Event]
    /// Kept states after `base`, compared byte for byte when the replay reaches them.
    public var checkpoints: [State]

    /// Creates a fixture.
    public init(
        session: String,
        system: String,
        schemaVersion: Int,
        base: State,
        events: [Event],
        checkpoints: [State]
    ) {
        self.session = session
        self.system = system
        self.schemaVersion = schemaVersion
        self.base = base
        self.events = events
        self.checkpoints = checkpoints
    }

    /// The fixture as JSON.
    public var json: JSONValue {
        func state(_ state: State) -> JSONValue {
            .object([
                "revision": .int(Int64(state.revision)),
                "schemaVersion": .int(Int64(state.schemaVersion)),
                "state": state.state,
            ])
        }
        return .object([
            "fixture": .string(Self.format),
            "session": .string(session),
            "system": .string(system),
            "schemaVersion": .int(Int64(schemaVersion)),
            "base": state(base),
            "events": .array(
                events.map { event in
                    .object([
                        "revision": .int(Int64(event.revision)),
                        "origin": .string(event.origin),
                        "type": event.event.eventType.map { .string($0) } ?? .null,
                        "time": event.time.map { .int($0) } ?? .null,
                        "schemaVersion": .int(Int64(event.schemaVersion)),
                        "event": event.event,
                        "stateChecksum": event.stateChecksum.map { .string(StateChecksum.hex($0)) } ?? .null,
                    ])
                }
            ),
            "checkpoints": .array(checkpoints.map(state)),
        ])
    }

    /// Reads a fixture's JSON; throws what is missing or wrong, with its place.
    public init(json: JSONValue) throws(MigrationFailure) {
        let root = try Self.object(json, "")
        guard case .string(Self.format)? = root["fixture"] else {
            throw MigrationFailure(path: "/fixture", "not a \(Self.format) fixture")
        }
        func state(_ value: JSONValue?, _ path: String) throws(MigrationFailure) -> State {
            let members = try Self.object(value, path)
            return State(
                revision: UInt64(try Self.integer(members["revision"], path + "/revision")),
                schemaVersion: Int(try Self.integer(members["schemaVersion"], path + "/schemaVersion")),
                state: members["state"] ?? .null
            )
        }
        guard case .string(let session)? = root["session"], case .string(let system)? = root["system"] else {
            throw MigrationFailure(path: "", "\"session\" and \"system\" are strings")
        }
        self.session = session
        self.system = system
        schemaVersion = Int(try Self.integer(root["schemaVersion"], "/schemaVersion"))
        base = try state(root["base"], "/base")
        guard case .array(let events)? = root["events"], case .array(let checkpoints)? = root["checkpoints"] else {
            throw MigrationFailure(path: "", "\"events\" and \"checkpoints\" are arrays")
        }
        var read: [Event] = []
        for (index, value) in events.enumerated() {
            let path = "/events/\(index)"
            let members = try Self.object(value, path)
            var checksum: UInt64?
            if case .string(let hex)? = members["stateChecksum"] {
                guard let parsed = UInt64(hex, radix: 16) else {
                    throw MigrationFailure(path: path + "/stateChecksum", "not hexadecimal")
                }
                checksum = parsed
            }
            var time: Int64?
            if case .int(let milliseconds)? = members["time"] { time = milliseconds }
            guard case .string(let origin)? = members["origin"], let event = members["event"] else {
                throw MigrationFailure(path: path, "an event has \"origin\" and \"event\"")
            }
            read.append(
                Event(
                    revision: UInt64(try Self.integer(members["revision"], path + "/revision")),
                    origin: origin,
                    time: time,
                    schemaVersion: Int(try Self.integer(members["schemaVersion"], path + "/schemaVersion")),
                    event: event,
                    stateChecksum: checksum
                )
            )
        }
        self.events = read
        var states: [State] = []
        for (index, value) in checkpoints.enumerated() { states.append(try state(value, "/checkpoints/\(index)")) }
        self.checkpoints = states
    }

    private static func object(_ value: JSONValue?, _ path: String) throws(MigrationFailure) -> [String: JSONValue] {
        guard case .object(let members)? = value else { throw MigrationFailure(path: path, "expected an object") }
        return members
    }

    private static func integer(_ value: JSONValue?, _ path: String) throws(MigrationFailure) -> Int64 {
        guard case .int(let number)? = value, number >= 0 else {
            throw MigrationFailure(path: path, "expected a whole number ≥ 0")
        }
        return number
    }
}
