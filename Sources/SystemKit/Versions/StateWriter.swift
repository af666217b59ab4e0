import FeedbackJSON
import Foundation

/// Writes a state as `encodeState` promises: the bytes Foundation's `JSONEncoder` writes with
/// `[.sortedKeys, .withoutEscapingSlashes]`, without its per-value work (an encoder object and dynamic casts for
/// every value, a future per container). With `Options.plain` it writes events as the journal's `JSONEncoder()` does,
/// an object's members in the order they were encoded (where `JSONEncoder`'s own order changes between processes).
///
/// What it writes, as `JSONEncoder` on Linux does: compact JSON; object keys ordered by their UTF-8 bytes (not
/// `String <`, which compares by Unicode scalars after normalisation); integers in decimal; a `Double` or `Float`
/// as its `description` without a trailing `.0`; strings escaped as `JSONEncoder` escapes them (`"`, `\`, and the
/// control characters; `/` and U+007F and above as they are). What it cannot promise to write alike, it refuses
/// with `StateWriter.Unsupported`, and `encodeState` then asks `JSONEncoder`: a `Date`, `Data`, `URL` or `Decimal`
/// (which `JSONEncoder` special-cases), a non-finite number, a key written twice in one object (or two keys that are
/// equal as Swift strings), a value that encodes nothing, a super-encoder. Tests compare it with `JSONEncoder` over
/// random states of every built-in system.
///
/// Pure and reentrant: each call builds its own tree.
enum StateWriter {
    /// A value this writer leaves to `JSONEncoder`.
    struct Unsupported: Error {}

    /// How `JSONEncoder` was set up: the writer writes what that encoder would.
    struct Options {
        /// `.sortedKeys`. Without it `JSONEncoder` writes an object's members in its dictionary's order, which
        /// differs from one process to the next, so no reader can depend on it: the writer then writes them in the
        /// order they were encoded (the `encode(to:)`'s order, one of the orders `JSONEncoder` may write).
        var sortsKeys: Bool
        /// How strings are escaped: as `JSONEncoder` does (`\b`, `\f`), and `/` written `\/` unless
        /// `.withoutEscapingSlashes`.
        var strings: JSONString.Style

        /// `[.sortedKeys, .withoutEscapingSlashes]`: what `encodeState` writes.
        static let state = Options(
            sortsKeys: true,
            strings: JSONString.Style(escapesSlashes: false, shortBackspaceAndFormFeed: true)
        )
        /// `JSONEncoder()`'s defaults: what the journal writes events with.
        static let plain = Options(
            sortsKeys: false,
            strings: JSONString.Style(escapesSlashes: true, shortBackspaceAndFormFeed: true)
        )
    }

    /// Appends `value` as `write` writes it; false (with `bytes` to be thrown away) where `write` throws.
    static func append<Value: Encodable>(_ value: Value, _ options: Options, to bytes: inout [UInt8]) -> Bool {
        guard let node = try? StateNode.encoding(value) else { return false }
        return append(node, options, to: &bytes)
    }

    /// Appends `node` as `write` writes it (a primitive the derived writers hand over without an encoder); false
    /// where `write` throws.
    static func append(_ node: StateNode, _ options: Options, to bytes: inout [UInt8]) -> Bool {
        (try? node.write(into: &bytes, options)) != nil
    }

    /// `value` as JSON bytes, as `JSONEncoder` set up as `options` says writes it, or `Unsupported`.
    static func write<Value: Encodable>(_ value: Value, options: Options = .state) throws -> [UInt8] {
        let node = try StateNode.encoding(value)
        var bytes: [UInt8] = []
        bytes.reserveCapacity(64)
        try node.write(into: &bytes, options)
        return bytes
    }
}

/// A value of the tree `StateWriter` builds before it writes (keys are sorted only when an object is complete).
enum StateNode {
    case empty
    case null
    case bool(Bool)
    case int(Int64)
    case uint(UInt64)
    case double(Double)
    case float(Float)
    case string(String)
    case object(StateObject)
    case array(StateArray)

    /// What `value` encodes to, through a fresh encoder; Foundation's special types are refused.
    static func encoding<Value: Encodable>(_ value: Value, codingPath: [any CodingKey] = []) throws -> StateNode {
        if Value.self == Date.self || Value.self == Data.self || Value.self == URL.self || Value.self == Decimal.self {
            throw StateWriter.Unsupported()
        }
        // JSON held as it came (a page's upstream items) is converted, not encoded value by value.
        if Value.self == JSONValue.self { return StateNode(unsafeBitCast(value, to: JSONValue.self)) }
        if Value.self == [JSONValue].self { return .array(StateArray(unsafeBitCast(value, to: [JSONValue].self))) }
        let slot = StateSlot()
        try value.encode(to: StateEncoder(slot: slot, codingPath: codingPath))
        guard case .empty = slot.node else { return slot.node }
        throw StateWriter.Unsupported()
    }

    /// What `JSONValue`'s own `encode(to:)` would put here.
    init(_ json: JSONValue) {
        switch json {
        case .null: self = .null
        case .bool(let flag): self = .bool(flag)
        case .int(let number): self = .int(number)
        case .double(let number): self = .double(number)
        case .string(let text): self = .string(text)
        case .array(let elements): self = .array(StateArray(elements))
        case .object(let members):
            let object = StateObject()
            object.members = members.map { (key: $0.key, value: StateNode($0.value)) }
            self = .object(object)
        }
    }

    func write(into bytes: inout [UInt8], _ options: StateWriter.Options) throws {
        switch self {
        case .empty: throw StateWriter.Unsupported()
        case .null: bytes.append(contentsOf: "null".utf8)
        case .bool(let flag): bytes.append(contentsOf: flag ? "true".utf8 : "false".utf8)
        case .int(let number):
            if number < 0 { bytes.append(UInt8(ascii: "-")) }
            DecimalText.append(number.magnitude, to: &bytes)
        case .uint(let number): DecimalText.append(number, to: &bytes)
        case .double(let number):
            guard number.isFinite else { throw StateWriter.Unsupported() }
            Self.writeNumber(number.description, into: &bytes)
        case .float(let number):
            guard number.isFinite else { throw StateWriter.Unsupported() }
            Self.writeNumber(number.description, into: &bytes)
        case .string(let text): JSONString.escape(text, into: &bytes, options.strings)
        case .object(let object): try object.write(into: &bytes, options)
        case .array(let array):
            if array.refused { throw StateWriter.Unsupported() }
            bytes.append(UInt8(ascii: "["))
            var first = true
            for element in array.elements {
                if !first { bytes.append(UInt8(ascii: ",")) }
                first = false
                try element.write(into: &bytes, options)
            }
            bytes.append(UInt8(ascii: "]"))
        }
    }

    /// A number's `description`, less a trailing `.0` (as `JSONEncoder` writes `1.0` as `1`).
    private static func writeNumber(_ text: String, into bytes: inout [UInt8]) {
        var text = text
        text.withUTF8 { utf8 in
            let whole =
                utf8.count >= 2 && utf8[utf8.count - 1] == UInt8(ascii: "0")
                && utf8[utf8.count - 2] == UInt8(ascii: ".")
            bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[0..<(whole ? utf8.count - 2 : utf8.count)]))
        }
    }
}

/// Where an encoder puts the one value it encodes.
final class StateSlot {
    var node: StateNode = .empty
}

/// An object's members in the order written; sorted by key when written out.
final class StateObject {
    /// One array of members, not one of keys and one of values: an allocation fewer for every object encoded.
    var members: [(key: String, value: StateNode)] = []
    /// A super-encoder was asked for: left to `JSONEncoder`.
    var refused = false

    /// Writes the object once (sorting its members in place when the options sort keys).
    func write(into bytes: inout [UInt8], _ options: StateWriter.Options) throws {
        if refused { throw StateWriter.Unsupported() }
        if members.count > 1 {
            if options.sortsKeys {
                members.sort { $0.key.utf8.lexicographicallyPrecedes($1.key.utf8) }
                try refuseDuplicates(sorted: true)
            } else {
                try refuseDuplicates(sorted: false)  // the plain options write the members as encoded
            }
        }
        bytes.append(UInt8(ascii: "{"))
        var first = true
        for member in members {
            if !first { bytes.append(UInt8(ascii: ",")) }
            first = false
            JSONString.escape(member.key, into: &bytes, options.strings)
            bytes.append(UInt8(ascii: ":"))
            try member.value.write(into: &bytes, options)
        }
        bytes.append(UInt8(ascii: "}"))
    }

    /// `JSONEncoder` keeps an object in a `[String: …]`, where a key written twice, or two keys equal as Swift
    /// strings (canonically equivalent), are one member: left to it. `sorted`: the members are in key order, so
    /// equal keys are neighbours; else every pair is compared (objects are small), or a sorted copy for big ones.
    private func refuseDuplicates(sorted: Bool) throws {
        var ascii = true
        for member in members where !member.key.utf8.allSatisfy({ $0 < 0x80 }) {
            ascii = false
            break
        }
        if !ascii {
            if Set(members.map(\.key)).count != members.count { throw StateWriter.Unsupported() }
            return
        }
        if sorted {
            for index in members.indices.dropFirst()
            where members[index].key.utf8.elementsEqual(members[index - 1].key.utf8) {
                throw StateWriter.Unsupported()
            }
        } else if members.count > 16 {
            let keys = members.map(\.key).sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
            for index in keys.indices.dropFirst() where keys[index].utf8.elementsEqual(keys[index - 1].utf8) {
                throw StateWriter.Unsupported()
            }
        } else {
            for index in members.indices {
                for other in members.indices[(index + 1)...]
                where members[index].key.utf8.elementsEqual(members[other].key.utf8) {
                    throw StateWriter.Unsupported()
                }
            }
        }
    }
}

/// An array's elements in order.
final class StateArray {
    var elements: [StateNode] = []
    /// A super-encoder was asked for: left to `JSONEncoder`.
    var refused = false

    init() {}

    init(_ values: [JSONValue]) {
        elements = values.map(StateNode.init)
    }
}
