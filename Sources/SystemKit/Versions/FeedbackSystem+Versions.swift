public import FeedbackJSON
import Foundation

extension FeedbackSystem {
    /// Version 1: a system that never changed its JSON.
    public var schemaVersion: Int { 1 }
    /// None.
    public var migrations: [SchemaMigration] { [] }

    /// The state as the host writes it everywhere (snapshots, answers, journal, fixtures): compact JSON with sorted
    /// keys, slashes not escaped. Equal states give equal bytes, which the state checksums rely on.
    /// `StateWriter` writes it (the same bytes as `canonicalEncoder`, at a fraction of the cost); what it leaves
    /// aside, `canonicalEncoder` writes.
    public static func encodeState(_ state: State) -> [UInt8] {
        encodeStateGenerally(state)
    }

    /// `encodeState` through the state's `Codable` conformance.
    @usableFromInline
    package static func encodeStateGenerally(_ state: State) -> [UInt8] {
        if let bytes = try? StateWriter.write(state) { return bytes }
        // A Codable state whose encoding throws is a bug of the system, not of a client.
        guard let data = try? canonicalEncoder.encode(state) else {
            preconditionFailure("the state of system \(Self.self) failed to encode")
        }
        return Array(data)
    }

    /// An event as the journal writes it: what `JSONEncoder()` with its default options writes. `StateWriter` writes
    /// it when it can promise the same bytes (an event whose objects have one member each, such as
    /// `{"type":"increment"}`: with more, `JSONEncoder` orders them by its dictionary, differently in each process);
    /// else `JSONEncoder` does. Throws what `JSONEncoder` throws.
    public static func encodeEvent(_ event: Event) throws -> [UInt8] {
        try encodeEventGenerally(event)
    }

    /// An object's event from its members where `decodeEvent(plain:)` reads it, else (errors included) through the
    /// event's `Decodable` conformance. Inlinable, as the reader below: a system's conformance runs them specialised
    /// (a batch's events and a body the short way leaves are decoded here).
    @inlinable
    public static func decodeEvent(_ value: JSONValue) throws -> Event {
        if case .object(let members) = value, let event = decodeEvent(plain: EventFields(members)) { return event }
        return try value.decode(Event.self)
    }

    /// Nil: the decoder reads every event (`decodeEvent(_:)`).
    @inlinable
    public static func decodeEvent(plain fields: EventFields) -> Event? { nil }

    /// `encodeEvent` through the event's `Codable` conformance.
    @usableFromInline
    package static func encodeEventGenerally(_ event: Event) throws -> [UInt8] {
        if let bytes = try? StateWriter.write(event, options: .plain) { return bytes }
        return Array(try plainEncoder.encode(event))
    }
}

extension FeedbackSystem where Event: TaggedEvent {
    /// What `@FeedbackEvent` derived reads without a decoder (`TaggedEvent.init(plainFields:)`): a post's event is
    /// decoded once, on every post's way. Inlinable, as the writers below: a system's conformance runs them
    /// specialised.
    @inlinable
    public static func decodeEvent(plain fields: EventFields) -> Event? { Event(plainFields: fields) }

    /// An event as the journal writes it (the same bytes as the general `encodeEvent`): what `@FeedbackEvent`
    /// derived writes it without an encoder (a post's event is journaled once, so this is on every post's way); what
    /// it leaves aside, the general way writes.
    @inlinable
    public static func encodeEvent(_ event: Event) throws -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(32)
        if event.appendPlainJSON(to: &bytes) { return bytes }
        return try encodeEventGenerally(event)
    }
}

extension FeedbackSystem where State: StateJSONWritable {
    /// The state as the host writes it everywhere (the same bytes as the general `encodeState`): what
    /// `@FeedbackSchema` derived writes it without an encoder (every post's answer and checksum encode a state);
    /// what it leaves aside, the general way writes.
    @inlinable
    public static func encodeState(_ state: State) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(64)
        if state.appendStateJSON(to: &bytes) { return bytes }
        return encodeStateGenerally(state)
    }
}

/// A value that writes its own JSON as `FeedbackSystem.encodeState` writes it (compact, keys ordered by their UTF-8
/// bytes, slashes not escaped): `@FeedbackSchema` derives it for a struct from the stored properties it reads,
/// as their synthesized (or its stable) `Codable` writes them.
public protocol StateJSONWritable: Encodable {
    /// Appends the value's JSON, or returns false, leaving `bytes` to be thrown away, when only the general way
    /// (`StateWriter`, then `JSONEncoder`) can promise those bytes.
    func appendStateJSON(to bytes: inout [UInt8]) -> Bool
}

/// What `@FeedbackSchema`'s `appendStateJSON(to:)` calls to write a member's value as `encodeState` writes it:
/// `StateWriter`'s own writing with its state options, a primitive without an encoder. Each returns false when only the general way can promise them.
public enum StateJSON {
    public static func append(_ value: Bool, to bytes: inout [UInt8]) -> Bool { write(.bool(value), &bytes) }
    public static func append(_ value: String, to bytes: inout [UInt8]) -> Bool { write(.string(value), &bytes) }
    public static func append(_ value: Int, to bytes: inout [UInt8]) -> Bool { write(.int(Int64(value)), &bytes) }
    public static func append(_ value: Int64, to bytes: inout [UInt8]) -> Bool { write(.int(value), &bytes) }
    public static func append(_ value: UInt64, to bytes: inout [UInt8]) -> Bool { write(.uint(value), &bytes) }

    /// A value that writes itself (a type `@FeedbackSchema` derived), without an encoder.
    public static func append<Value: StateJSONWritable>(_ value: Value, to bytes: inout [UInt8]) -> Bool {
        value.appendStateJSON(to: &bytes)
    }

    /// An array of such values.
    public static func append<Element: StateJSONWritable>(_ value: [Element], to bytes: inout [UInt8]) -> Bool {
        bytes.append(UInt8(ascii: "["))
        for index in value.indices {
            if index > value.startIndex { bytes.append(UInt8(ascii: ",")) }
            guard value[index].appendStateJSON(to: &bytes) else { return false }
        }
        bytes.append(UInt8(ascii: "]"))
        return true
    }

    /// An optional whose type does not read as one (an alias): synthesized `Codable` leaves it out when nil, so
    /// the member's key may not be written at all. Left to the general way.
    public static func append<Wrapped: Encodable>(_ value: Wrapped?, to bytes: inout [UInt8]) -> Bool { false }

    /// Any other value, through `StateWriter`'s encoder.
    public static func append<Value: Encodable>(_ value: Value, to bytes: inout [UInt8]) -> Bool {
        StateWriter.append(value, .state, to: &bytes)
    }

    private static func write(_ node: StateNode, _ bytes: inout [UInt8]) -> Bool {
        StateWriter.append(node, .state, to: &bytes)
    }
}

/// What `@FeedbackEvent`'s `appendPlainJSON(to:)` calls to write a field's value as `encodeEvent` writes it:
/// `StateWriter`'s own writing with its plain options, a primitive without an encoder. Each returns false when only the general way can promise them.
public enum PlainJSON {
    public static func append(_ value: Bool, to bytes: inout [UInt8]) -> Bool { write(.bool(value), &bytes) }
    public static func append(_ value: String, to bytes: inout [UInt8]) -> Bool { write(.string(value), &bytes) }
    public static func append(_ value: Int, to bytes: inout [UInt8]) -> Bool { write(.int(Int64(value)), &bytes) }
    public static func append(_ value: Int64, to bytes: inout [UInt8]) -> Bool { write(.int(value), &bytes) }
    public static func append(_ value: UInt64, to bytes: inout [UInt8]) -> Bool { write(.uint(value), &bytes) }

    /// An optional whose type does not read as one (an alias): left to the general way.
    public static func append<Wrapped: Encodable>(_ value: Wrapped?, to bytes: inout [UInt8]) -> Bool { false }

    /// Any other value, through `StateWriter`'s encoder.
    public static func append<Value: Encodable>(_ value: Value, to bytes: inout [UInt8]) -> Bool {
        StateWriter.append(value, .plain, to: &bytes)
    }

    private static func write(_ node: StateNode, _ bytes: inout [UInt8]) -> Bool {
        StateWriter.append(node, .plain, to: &bytes)
    }
}

/// The encoder of `encodeEvent`, shared (`JSONEncoder.encode` is thread-safe).
let plainEncoder = JSONEncoder()

/// The encoder of `encodeState`, shared (`JSONEncoder.encode` is thread-safe).
let canonicalEncoder: JSONEncoder = {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
    return encoder
}()

/// The checksum of an encoded state that the journal keeps with each event and a fixture with each step: 64-bit
/// FNV-1a over the bytes. It finds the first revision at which a replay's state differs from the recorded one
/// (not an integrity check against tampering). It is the product's one FNV-1a: the web page's entity tags are its hex
/// too.
public enum StateChecksum {
    /// The checksum of `bytes`.
    @inlinable
    public static func of(_ bytes: some Sequence<UInt8>) -> UInt64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in bytes {
            hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01b3
        }
        return hash
    }

    /// `value` as 16 lowercase hexadecimal digits, as fixtures write it.
    public static func hex(_ value: UInt64) -> String {
        let digits = String(value, radix: 16)
        return String(repeating: "0", count: 16 - digits.count) + digits
    }
}
