import Foundation

/// A `Decoder` that reads a ``JSONValue`` tree directly, so a posted event is parsed once: bytes to `JSONValue`
/// by ``JSONParser``, then straight into the system's `Event`.
///
/// It follows `JSONDecoder`'s default strategies: numbers convert to any numeric type they fit exactly, `Data` is
/// base64 text, `URL` is a string, `Date` is seconds since 2001. Errors are the `DecodingError`s `JSONDecoder`
/// throws, with the coding path. A value type used on one thread at a time.
struct JSONValueDecoder: Decoder {
    let value: JSONValue
    let codingPath: [any CodingKey]
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    static func decode<T: Decodable>(_ type: T.Type, from value: JSONValue) throws -> T {
        try JSONValueDecoder(value: value, codingPath: []).decodeValue(type)
    }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        guard case .object(let members) = value else {
            if value == .null { throw absent([String: JSONValue].self) }
            throw mismatch([String: JSONValue].self, "expected an object but found \(value.kindDescription)")
        }
        return KeyedDecodingContainer(Keyed<Key>(members: members, codingPath: codingPath))
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        guard case .array(let elements) = value else {
            if value == .null { throw absent([JSONValue].self) }
            throw mismatch([JSONValue].self, "expected an array but found \(value.kindDescription)")
        }
        return Unkeyed(elements: elements, codingPath: codingPath)
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer { self }

    func absent(_ type: Any.Type) -> DecodingError {
        .valueNotFound(
            type,
            DecodingError.Context(
                codingPath: codingPath,
                debugDescription: "expected \(JSONValue.kind(of: type)) but found null"
            )
        )
    }

    func mismatch(_ type: Any.Type, _ message: String) -> DecodingError {
        .typeMismatch(type, DecodingError.Context(codingPath: codingPath, debugDescription: message))
    }

    /// Decodes `type`, with `JSONDecoder`'s special cases for `Data`, `URL` and `Decimal`.
    func decodeValue<T: Decodable>(_ type: T.Type) throws -> T {
        if T.self == JSONValue.self { return value as! T }
        if T.self == Data.self {
            guard case .string(let text) = value, let data = Data(base64Encoded: text) else {
                throw mismatch(Data.self, "expected base64 text but found \(value.kindDescription)")
            }
            return data as! T
        }
        if T.self == URL.self {
            guard case .string(let text) = value, let url = URL(string: text) else {
                throw mismatch(URL.self, "expected a URL string but found \(value.kindDescription)")
            }
            return url as! T
        }
        if T.self == Decimal.self {
            switch value {
            case .int(let number): return Decimal(number) as! T
            case .double(let number): return Decimal(number) as! T
            default: throw mismatch(Decimal.self, "expected a number but found \(value.kindDescription)")
            }
        }
        return try T(from: self)
    }

    func nested(_ value: JSONValue, key: any CodingKey) -> JSONValueDecoder {
        JSONValueDecoder(value: value, codingPath: codingPath + [key])
    }
}

extension JSONValueDecoder: SingleValueDecodingContainer {
    func decodeNil() -> Bool { value == .null }

    func decode(_ type: Bool.Type) throws -> Bool {
        guard case .bool(let flag) = value else { throw wrong(type) }
        return flag
    }

    func decode(_ type: String.Type) throws -> String {
        guard case .string(let text) = value else { throw wrong(type) }
        return text
    }

    func decode(_ type: Double.Type) throws -> Double {
        switch value {
        case .double(let number): return number
        case .int(let number): return Double(number)
        default: throw wrong(type)
        }
    }

    func decode(_ type: Float.Type) throws -> Float {
        let narrowed = Float(try decode(Double.self))
        guard narrowed.isFinite else { throw tooLarge(type) }
        return narrowed
    }

    func decode(_ type: Int.Type) throws -> Int { try integer(type) }
    func decode(_ type: Int8.Type) throws -> Int8 { try integer(type) }
    func decode(_ type: Int16.Type) throws -> Int16 { try integer(type) }
    func decode(_ type: Int32.Type) throws -> Int32 { try integer(type) }
    func decode(_ type: Int64.Type) throws -> Int64 { try integer(type) }
    func decode(_ type: UInt.Type) throws -> UInt { try integer(type) }
    func decode(_ type: UInt8.Type) throws -> UInt8 { try integer(type) }
    func decode(_ type: UInt16.Type) throws -> UInt16 { try integer(type) }
    func decode(_ type: UInt32.Type) throws -> UInt32 { try integer(type) }
    func decode(_ type: UInt64.Type) throws -> UInt64 { try integer(type) }

    func decode<T: Decodable>(_ type: T.Type) throws -> T { try decodeValue(type) }

    private func integer<T: FixedWidthInteger>(_ type: T.Type) throws -> T {
        switch value {
        case .int(let number):
            guard let exact = T(exactly: number) else { throw tooLarge(type) }
            return exact
        case .double(let number):
            // Integer text that does not fit 64 bits parses as a double, which can round into range (-2^63 - 1
            // rounds to -2^63): a double at or past 2^63 in magnitude is out of range, whatever it rounded to.
            guard number.magnitude < 0x1p63, let exact = T(exactly: number) else { throw tooLarge(type) }
            return exact
        default:
            throw wrong(type)
        }
    }

    private func wrong(_ type: Any.Type) -> DecodingError {
        if value == .null { return absent(type) }
        return mismatch(type, "expected \(JSONValue.kind(of: type)) but found \(value.kindDescription)")
    }

    private func tooLarge(_ type: Any.Type) -> DecodingError {
        .dataCorrupted(
            DecodingError.Context(
                codingPath: codingPath,
                debugDescription:
                    "the number \(String(decoding: value.serialized(), as: UTF8.self)) is not \(JSONValue.kind(of: type))"
            )
        )
    }
}

extension JSONValueDecoder {
    struct Keyed<Key: CodingKey>: KeyedDecodingContainerProtocol {
        let members: [String: JSONValue]
        let codingPath: [any CodingKey]

        var allKeys: [Key] { members.keys.compactMap { Key(stringValue: $0) } }

        func contains(_ key: Key) -> Bool { members[key.stringValue] != nil }

        private func child(_ key: Key) throws -> JSONValueDecoder {
            guard let value = members[key.stringValue] else {
                throw DecodingError.keyNotFound(
                    key,
                    DecodingError.Context(
                        codingPath: codingPath,
                        debugDescription: "no value for \"\(key.stringValue)\""
                    )
                )
            }
            return JSONValueDecoder(value: value, codingPath: codingPath + [key])
        }

        func decodeNil(forKey key: Key) throws -> Bool { try child(key).decodeNil() }

        func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T { try child(key).decodeValue(type) }

        // The common members read straight from the object: no child decoder, no longer coding path, no
        // `T(from:)` through a single-value container. Anything else (absent, another kind, out of range) takes the
        // generic way, which makes the same error it always made.

        func decode(_ type: String.Type, forKey key: Key) throws -> String {
            if case .string(let text)? = members[key.stringValue] { return text }
            return try child(key).decodeValue(type)
        }

        func decode(_ type: Bool.Type, forKey key: Key) throws -> Bool {
            if case .bool(let flag)? = members[key.stringValue] { return flag }
            return try child(key).decodeValue(type)
        }

        func decode(_ type: Int.Type, forKey key: Key) throws -> Int {
            if case .int(let number)? = members[key.stringValue], let exact = Int(exactly: number) { return exact }
            return try child(key).decodeValue(type)
        }

        func decode(_ type: Int64.Type, forKey key: Key) throws -> Int64 {
            if case .int(let number)? = members[key.stringValue] { return number }
            return try child(key).decodeValue(type)
        }

        func decode(_ type: Double.Type, forKey key: Key) throws -> Double {
            switch members[key.stringValue] {
            case .double(let number)?: return number
            case .int(let number)?: return Double(number)
            default: return try child(key).decodeValue(type)
            }
        }

        func nestedContainer<NestedKey: CodingKey>(
            keyedBy type: NestedKey.Type,
            forKey key: Key
        ) throws -> KeyedDecodingContainer<NestedKey> {
            try child(key).container(keyedBy: type)
        }

        func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
            try child(key).unkeyedContainer()
        }

        func superDecoder() throws -> any Decoder {
            let key = JSONValueKey(stringValue: "super")
            return JSONValueDecoder(value: members["super"] ?? .null, codingPath: codingPath + [key])
        }

        func superDecoder(forKey key: Key) throws -> any Decoder {
            JSONValueDecoder(value: members[key.stringValue] ?? .null, codingPath: codingPath + [key])
        }
    }

    struct Unkeyed: UnkeyedDecodingContainer {
        let elements: [JSONValue]
        let codingPath: [any CodingKey]
        var currentIndex = 0

        init(elements: [JSONValue], codingPath: [any CodingKey]) {
            self.elements = elements
            self.codingPath = codingPath
        }

        var count: Int? { elements.count }
        var isAtEnd: Bool { currentIndex >= elements.count }

        private mutating func next(_ type: Any.Type) throws -> JSONValueDecoder {
            let key = JSONValueKey(intValue: currentIndex)
            guard !isAtEnd else {
                throw DecodingError.valueNotFound(
                    type,
                    DecodingError.Context(
                        codingPath: codingPath + [key],
                        debugDescription: "the array has only \(elements.count) elements"
                    )
                )
            }
            defer { currentIndex += 1 }
            return JSONValueDecoder(value: elements[currentIndex], codingPath: codingPath + [key])
        }

        mutating func decodeNil() throws -> Bool {
            guard !isAtEnd, elements[currentIndex] == .null else { return false }
            currentIndex += 1
            return true
        }

        mutating func decode<T: Decodable>(_ type: T.Type) throws -> T { try next(type).decodeValue(type) }

        mutating func nestedContainer<NestedKey: CodingKey>(
            keyedBy type: NestedKey.Type
        ) throws -> KeyedDecodingContainer<NestedKey> {
            try next([String: JSONValue].self).container(keyedBy: type)
        }

        mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer {
            try next([JSONValue].self).unkeyedContainer()
        }

        mutating func superDecoder() throws -> any Decoder { try next(JSONValue.self) }
    }
}

/// A coding key for array positions and `super`.
struct JSONValueKey: CodingKey {
    let stringValue: String
    let intValue: Int?

    init(stringValue: String) {
        self.stringValue = stringValue
        intValue = nil
    }

    init(intValue: Int) {
        stringValue = "\(intValue)"
        self.intValue = intValue
    }
}

extension JSONValue {
    /// "an object", "a string", ...: for error messages.
    var kindDescription: String {
        switch self {
        case .null: "null"
        case .bool: "true or false"
        case .int, .double: "a number"
        case .string: "a string"
        case .array: "an array"
        case .object: "an object"
        }
    }
}

extension JSONValue {
    /// What a client must send for a value decoded as `type`, in the API's words and never a Swift type's name:
    /// "an integer from -2147483648 to 2147483647", "a string", "an object".
    package static func kind(of type: Any.Type) -> String {
        switch type {
        case let integer as any FixedWidthInteger.Type:
            if integer.bitWidth == 64, integer.isSigned { return "an integer" }
            let min = integer.min
            let max = integer.max
            return "an integer from \(min) to \(max)"
        case is Double.Type, is Float.Type, is Decimal.Type: return "a number"
        case is String.Type, is Character.Type: return "a string"
        case is Bool.Type: return "true or false"
        case is Data.Type: return "base64 text"
        case is URL.Type: return "a URL string"
        case is [JSONValue].Type: return "an array"
        case is [String: JSONValue].Type: return "an object"
        default:
            let name = String(describing: type)
            if name.hasPrefix("Array<") || name.hasPrefix("[") && !name.contains(":") { return "an array" }
            return "an object"
        }
    }
}
