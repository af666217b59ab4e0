import Foundation

/// A JSON document as a value: what the service diffs, selects from and writes.
///
/// Integers and fractional numbers are kept apart so that a state's `1` never turns into `1.0` on the wire.
/// Values are immutable and `Sendable`; they can be shared between queues freely.
public enum JSONValue: Sendable, Hashable {
    case null
    case bool(Bool)
    case int(Int64)
    case double(Double)
    case string(String)
    case array([JSONValue])
    case object([String: JSONValue])
}

extension Dictionary where Key == String, Value == JSONValue {
    /// The member named `name`. An object of a few members (a posted event's) is searched by comparing names, each
    /// compare a few instructions for the short names events use, instead of hashing `name` (SipHash over its bytes,
    /// a few hundred instructions, on every lookup); a larger one is looked up by hash.
    @inlinable
    public func member(_ name: String) -> JSONValue? {
        guard count <= 4 else { return self[name] }
        var index = startIndex
        while index != endIndex {
            if keys[index] == name { return values[index] }
            formIndex(after: &index)
        }
        return nil
    }
}

extension JSONValue: Codable {
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let value = try? container.decode(Bool.self) {
            self = .bool(value)
        } else if let value = try? container.decode(Int64.self) {
            self = .int(value)
        } else if let value = try? container.decode(Double.self) {
            self = .double(value)
        } else if let value = try? container.decode(String.self) {
            self = .string(value)
        } else if let value = try? container.decode([JSONValue].self) {
            self = .array(value)
        } else {
            self = .object(try container.decode([String: JSONValue].self))
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .null: try container.encodeNil()
        case .bool(let value): try container.encode(value)
        case .int(let value): try container.encode(value)
        case .double(let value): try container.encode(value)
        case .string(let value): try container.encode(value)
        case .array(let value): try container.encode(value)
        case .object(let value): try container.encode(value)
        }
    }
}

extension JSONValue {
    /// The value of any `Encodable`, as the service's encoder would write it.
    public init(encoding value: some Encodable) throws {
        let data = try JSONEncoder().encode(value)
        self = try JSONValue(parsing: Array(data))
    }

    /// Decodes a `Decodable` from this value directly, without writing and reparsing text; errors are
    /// `DecodingError`s as `JSONDecoder` throws them.
    public func decode<T: Decodable>(_ type: T.Type) throws -> T {
        try JSONValueDecoder.decode(type, from: self)
    }

    /// Compact JSON text with object keys sorted, so equal values always give equal bytes.
    public func serialized() -> [UInt8] {
        var out: [UInt8] = []
        write(into: &out)
        return out
    }

    /// Appends compact JSON text with sorted object keys to `out`.
    public func write(into out: inout [UInt8]) {
        switch self {
        case .null: out.append(contentsOf: "null".utf8)
        case .bool(let value): out.append(contentsOf: (value ? "true" : "false").utf8)
        case .int(let value): out.append(contentsOf: String(value).utf8)
        case .double(let value): Self.writeDouble(value, into: &out)
        case .string(let value): JSONString.escape(value, into: &out)
        case .array(let elements):
            out.append(UInt8(ascii: "["))
            for (index, element) in elements.enumerated() {
                if index > 0 { out.append(UInt8(ascii: ",")) }
                element.write(into: &out)
            }
            out.append(UInt8(ascii: "]"))
        case .object(let members):
            out.append(UInt8(ascii: "{"))
            for (index, key) in members.keys.sorted().enumerated() {
                if index > 0 { out.append(UInt8(ascii: ",")) }
                JSONString.escape(key, into: &out)
                out.append(UInt8(ascii: ":"))
                members[key]!.write(into: &out)
            }
            out.append(UInt8(ascii: "}"))
        }
    }

    private static func writeDouble(_ value: Double, into out: inout [UInt8]) {
        guard value.isFinite else {
            // JSON has no NaN or infinity; JSONEncoder refuses them too, so they only come from hand-made values.
            out.append(contentsOf: "null".utf8)
            return
        }
        if value == value.rounded(), abs(value) < 1e15 {
            out.append(contentsOf: String(Int64(value)).utf8)
        } else {
            out.append(contentsOf: "\(value)".utf8)
        }
    }

}
