package import FeedbackJSON

/// Replaces the values at a system's redacted JSON Pointers (`FeedbackSystem.redactedPointers`) before a state or an
/// event leaves the server through an inspection route. A pointer that does not resolve in a value changes nothing.
///
/// Concurrency: a value; pure.
package struct Redaction: Sendable {
    /// What a redacted value is replaced with.
    package static let placeholder = JSONValue.string("[redacted]")
    let pointers: [JSONPointer]

    /// `value` with every redacted pointer's value replaced.
    package func apply(to value: JSONValue) -> JSONValue {
        guard !pointers.isEmpty else { return value }
        var result = value
        for pointer in pointers where pointer.resolve(in: result) != nil {
            if pointer.tokens.isEmpty { return Self.placeholder }
            result = (try? JSONPatch([.replace(pointer, Self.placeholder)]).apply(to: result)) ?? result
        }
        return result
    }
}
