import FeedbackJSON
import SystemKit

/// Writes `JSONValue`s through an encoder's containers with their concrete `encode(String)`, `encode(Int64)`, ...
/// calls, the same output as `JSONValue`'s own `Encodable` conformance.
///
/// The paging state holds hundreds of upstream items; encoding each leaf as a generic `Encodable` made
/// Foundation's `JSONEncoder` the largest cost of a page (it checks every generic value for its special types).
/// Pure functions: safe to call from anywhere.
enum JSONValueWriter {
    static func write(_ values: [JSONValue], into container: inout some UnkeyedEncodingContainer) throws {
        for value in values { try write(value, into: &container) }
    }

    static func write(_ value: JSONValue, into container: inout some UnkeyedEncodingContainer) throws {
        switch value {
        case .null: try container.encodeNil()
        case .bool(let flag): try container.encode(flag)
        case .int(let number): try container.encode(number)
        case .double(let number): try container.encode(number)
        case .string(let text): try container.encode(text)
        case .array(let elements):
            var nested = container.nestedUnkeyedContainer()
            try write(elements, into: &nested)
        case .object(let members):
            var nested = container.nestedContainer(keyedBy: TaggedEventKey.self)
            try write(members, into: &nested)
        }
    }

    static func write(
        _ members: [String: JSONValue],
        into container: inout KeyedEncodingContainer<TaggedEventKey>
    ) throws {
        for (name, value) in members {
            let key = TaggedEventKey(name)
            switch value {
            case .null: try container.encodeNil(forKey: key)
            case .bool(let flag): try container.encode(flag, forKey: key)
            case .int(let number): try container.encode(number, forKey: key)
            case .double(let number): try container.encode(number, forKey: key)
            case .string(let text): try container.encode(text, forKey: key)
            case .array(let elements):
                var nested = container.nestedUnkeyedContainer(forKey: key)
                try write(elements, into: &nested)
            case .object(let inner):
                var nested = container.nestedContainer(keyedBy: TaggedEventKey.self, forKey: key)
                try write(inner, into: &nested)
            }
        }
    }
}
