public import FeedbackJSON

/// A type that knows the JSON Schema of its JSON. `@FeedbackSchema` and `@FeedbackEvent` derive it; the standard
/// types' conformances are below.
public protocol JSONSchemaDescribing {
    /// The schema of this type's JSON as its `Codable` conformance writes and reads it.
    static var jsonSchema: JSONSchema { get }
}

// Integers carry their range, so that a generator of valid values (schemathesis) stays inside it; a JSON integer
// past 64 bits is refused whatever the type.
extension Int: JSONSchemaDescribing { public static var jsonSchema: JSONSchema { .integer(Int64.min...Int64.max) } }
extension Int64: JSONSchemaDescribing { public static var jsonSchema: JSONSchema { .integer(Int64.min...Int64.max) } }
extension Int32: JSONSchemaDescribing {
    public static var jsonSchema: JSONSchema { .integer(Int64(Int32.min)...Int64(Int32.max)) }
}
extension UInt: JSONSchemaDescribing { public static var jsonSchema: JSONSchema { .integer(0...Int64.max) } }
extension UInt64: JSONSchemaDescribing { public static var jsonSchema: JSONSchema { .integer(0...Int64.max) } }
extension Double: JSONSchemaDescribing { public static var jsonSchema: JSONSchema { .type("number") } }
extension Float: JSONSchemaDescribing { public static var jsonSchema: JSONSchema { .type("number") } }
extension Bool: JSONSchemaDescribing { public static var jsonSchema: JSONSchema { .type("boolean") } }
extension String: JSONSchemaDescribing { public static var jsonSchema: JSONSchema { .type("string") } }

extension Optional: JSONSchemaDescribing where Wrapped: JSONSchemaDescribing {
    /// The wrapped type's schema, or null.
    public static var jsonSchema: JSONSchema {
        JSONSchema(.object(["anyOf": .array([Wrapped.jsonSchema.json, JSONSchema.type("null").json])]))
    }
}

extension Array: JSONSchemaDescribing where Element: JSONSchemaDescribing {
    public static var jsonSchema: JSONSchema {
        JSONSchema(.object(["type": .string("array"), "items": Element.jsonSchema.json]))
    }
}

extension Set: JSONSchemaDescribing where Element: JSONSchemaDescribing {
    public static var jsonSchema: JSONSchema {
        JSONSchema(.object(["type": .string("array"), "items": Element.jsonSchema.json, "uniqueItems": .bool(true)]))
    }
}

extension Dictionary: JSONSchemaDescribing where Key == String, Value: JSONSchemaDescribing {
    public static var jsonSchema: JSONSchema {
        JSONSchema(.object(["type": .string("object"), "additionalProperties": Value.jsonSchema.json]))
    }
}

extension JSONValue: JSONSchemaDescribing {
    /// Any JSON.
    public static var jsonSchema: JSONSchema { .any }
}

extension WallTime: JSONSchemaDescribing {
    /// Milliseconds since 1970 as an integer.
    public static var jsonSchema: JSONSchema { .integer(Int64.min...Int64.max) }
}
